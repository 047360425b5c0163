-- No id past 2^53 (9007199254740992), the largest whole number every JSON reader keeps exactly
-- (storage/id_cap.py): an import may set a table's ids and next id up to it (domain/import_check
-- MAX_ID), and the store then refuses to give the next rather than give one a JavaScript client
-- reads wrong, and that its own export could not import back. The message is the one
-- store_file.store_problem tells as the store having no ids left.
CREATE TRIGGER memories_id_cap AFTER INSERT ON memories WHEN NEW.id > 9007199254740992
BEGIN SELECT RAISE(ABORT, 'aletheia: no ids left: memories'); END;
CREATE TRIGGER facts_id_cap AFTER INSERT ON facts WHEN NEW.id > 9007199254740992
BEGIN SELECT RAISE(ABORT, 'aletheia: no ids left: facts'); END;
CREATE TRIGGER episodes_id_cap AFTER INSERT ON episodes WHEN NEW.id > 9007199254740992
BEGIN SELECT RAISE(ABORT, 'aletheia: no ids left: episodes'); END;
CREATE TRIGGER episode_requests_id_cap AFTER INSERT ON episode_requests
WHEN NEW.id > 9007199254740992
BEGIN SELECT RAISE(ABORT, 'aletheia: no ids left: episode_requests'); END;
CREATE TRIGGER audit_id_cap AFTER INSERT ON audit WHEN NEW.id > 9007199254740992
BEGIN SELECT RAISE(ABORT, 'aletheia: no ids left: audit'); END;
