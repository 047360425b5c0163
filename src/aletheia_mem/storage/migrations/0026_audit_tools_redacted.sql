-- Secrets in the tool names of audit rows an earlier release wrote, redacted as every row's
-- is now: ``aletheia_mem.storage.audit_tools`` runs in this step's transaction, after this.
SELECT 1;
