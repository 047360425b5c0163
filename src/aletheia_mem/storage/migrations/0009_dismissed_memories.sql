-- The dismissed memories, newest first (the web UI's "show dismissed"): without these, listing
-- them walks every memory of the project. Partial indexes: only dismissed rows are in them.
CREATE INDEX memories_dismissed_project ON memories (project, created_at)
    WHERE dismissed_at IS NOT NULL;
CREATE INDEX memories_dismissed_created ON memories (created_at) WHERE dismissed_at IS NOT NULL;
