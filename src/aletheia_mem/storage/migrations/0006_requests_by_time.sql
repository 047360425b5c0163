-- The newest requests of all projects in one index range: session_start_context reads its
-- "Requests" section from there instead of sorting every request of the project.
CREATE INDEX episode_requests_at ON episode_requests (at);
