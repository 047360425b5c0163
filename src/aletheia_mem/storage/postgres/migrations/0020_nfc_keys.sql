-- Project keys, list names and fact keys in NFC, as every write now stores them: the rows an
-- earlier release stored decomposed (a macOS folder's name) are rewritten by
-- ``aletheia_mem.storage.canonical_keys``, which runs in this step's transaction, after this.
SELECT 1;
