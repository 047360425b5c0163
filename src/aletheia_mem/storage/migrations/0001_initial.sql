-- Memories and work-state lists share one id sequence: the #N users see.
CREATE TABLE memories (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    uid TEXT NOT NULL UNIQUE,
    project TEXT NOT NULL,
    type TEXT NOT NULL,
    kind TEXT NOT NULL,
    title TEXT NOT NULL,
    text TEXT NOT NULL,
    narrative TEXT,
    facts TEXT NOT NULL DEFAULT '[]',
    files TEXT NOT NULL DEFAULT '[]',
    tool TEXT NOT NULL,
    pinned INTEGER NOT NULL DEFAULT 0,
    created_at INTEGER NOT NULL,
    updated_at INTEGER NOT NULL,
    dismissed_at INTEGER,
    dismiss_reason TEXT,
    dedupe_key TEXT
);
CREATE UNIQUE INDEX memories_dedupe ON memories (project, dedupe_key) WHERE dedupe_key IS NOT NULL;
CREATE INDEX memories_project_created ON memories (project, created_at);
CREATE INDEX memories_created ON memories (created_at);
CREATE INDEX memories_pinned ON memories (project, created_at) WHERE pinned = 1;

CREATE TABLE memory_files (
    memory_id INTEGER NOT NULL REFERENCES memories (id),
    path TEXT NOT NULL,
    path_reversed TEXT NOT NULL,
    PRIMARY KEY (memory_id, path)
);
CREATE INDEX memory_files_path ON memory_files (path);
CREATE INDEX memory_files_path_reversed ON memory_files (path_reversed);

-- Written from Python, not by triggers, so that the indexed text can carry split identifiers.
CREATE VIRTUAL TABLE memory_fts USING fts5 (
    title, text, narrative, facts, files, tokenize = 'porter unicode61'
);

CREATE TABLE facts (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    uid TEXT NOT NULL UNIQUE,
    project TEXT NOT NULL,
    subject TEXT NOT NULL,
    subject_key TEXT NOT NULL,
    predicate TEXT NOT NULL,
    predicate_key TEXT NOT NULL,
    object TEXT NOT NULL,
    valid_from INTEGER NOT NULL,
    valid_to INTEGER,
    recorded_at INTEGER NOT NULL,
    superseded_by INTEGER REFERENCES facts (id),
    source TEXT NOT NULL,
    memory_id INTEGER REFERENCES memories (id),
    dismissed_at INTEGER,
    dismiss_reason TEXT
);
CREATE INDEX facts_subject ON facts (subject_key, project);
CREATE UNIQUE INDEX facts_current ON facts (project, subject_key, predicate_key)
    WHERE valid_to IS NULL;
CREATE INDEX facts_project_recorded ON facts (project, recorded_at);

CREATE VIRTUAL TABLE fact_fts USING fts5 (
    subject, predicate, object, tokenize = 'porter unicode61'
);

CREATE TABLE rules (
    id TEXT PRIMARY KEY,
    then_text TEXT NOT NULL,
    when_text TEXT NOT NULL,
    scope_tier TEXT NOT NULL,
    scope_name TEXT NOT NULL DEFAULT '',
    evidence_memory_ids TEXT NOT NULL DEFAULT '[]',
    evidence_fact_ids TEXT NOT NULL DEFAULT '[]',
    source TEXT NOT NULL,
    added_at INTEGER NOT NULL,
    last_confirmed_at INTEGER NOT NULL,
    enabled INTEGER NOT NULL DEFAULT 1,
    updated_at INTEGER NOT NULL
);

CREATE TABLE episodes (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    uid TEXT NOT NULL UNIQUE,
    project TEXT NOT NULL,
    tool TEXT NOT NULL,
    started_at INTEGER NOT NULL,
    ended_at INTEGER,
    summary TEXT,
    dismissed_at INTEGER,
    dismiss_reason TEXT
);
CREATE INDEX episodes_project_started ON episodes (project, started_at);

CREATE TABLE episode_requests (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    episode_id INTEGER NOT NULL REFERENCES episodes (id),
    at INTEGER NOT NULL,
    text TEXT NOT NULL
);
CREATE INDEX episode_requests_episode ON episode_requests (episode_id, at);

-- Who did what, never with the arguments (a dismissal's reason is the one kept detail).
CREATE TABLE audit (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    at INTEGER NOT NULL,
    actor TEXT NOT NULL,
    tool TEXT NOT NULL,
    project TEXT,
    result TEXT NOT NULL,
    detail TEXT
);
CREATE INDEX audit_at ON audit (at);
