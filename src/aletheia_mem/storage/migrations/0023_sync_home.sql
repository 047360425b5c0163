-- Where this store's sync id (sync_identity) was made: the store file's device, inode, birth
-- time (ns; 0 unknown) and absolute path, and a hash of the machine's id. A store found elsewhere (a copied data folder,
-- a restored backup) takes a new id before it syncs: under the copied id, the hub would leave
-- its changes out of the other file's pulls, and the other's out of its own.
CREATE TABLE sync_home (
    id INTEGER PRIMARY KEY CHECK (id = 1),
    store_id TEXT NOT NULL,
    device INTEGER NOT NULL,
    inode INTEGER NOT NULL,
    born INTEGER NOT NULL,
    path TEXT NOT NULL,
    machine TEXT NOT NULL,
    made_at INTEGER NOT NULL
);
