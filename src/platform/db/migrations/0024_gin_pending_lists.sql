-- GIN indexes take new entries into a pending list (up to gin_pending_list_limit, 4 MB by
-- default) that every search of the index reads whole until VACUUM or an inserter merges it.
-- Measured on the bench database after one round of creates and replies: 498 pending pages in
-- messages_search_idx, 157 to 306 in the contacts and ticket field indexes. A rare word's search
-- went from 4 to 20 ms, and the planner, costing the pending pages, chose a sequential scan of
-- contacts over their trigram indexes. A 64 kB list keeps what a search reads bounded to a few
-- pages; inserts still go through the list and are merged in small batches.
ALTER INDEX messages_search_idx SET (gin_pending_list_limit = 64);
ALTER INDEX tickets_search_idx SET (gin_pending_list_limit = 64);
ALTER INDEX tickets_fields_idx SET (gin_pending_list_limit = 64);
ALTER INDEX tickets_field_text_trgm_idx SET (gin_pending_list_limit = 64);
ALTER INDEX contacts_name_trgm_idx SET (gin_pending_list_limit = 64);
ALTER INDEX contacts_email_trgm_idx SET (gin_pending_list_limit = 64);
ALTER INDEX contacts_phone_trgm_idx SET (gin_pending_list_limit = 64);
ALTER INDEX contacts_fields_idx SET (gin_pending_list_limit = 64);
ALTER INDEX companies_name_trgm_idx SET (gin_pending_list_limit = 64);
ALTER INDEX companies_domain_trgm_idx SET (gin_pending_list_limit = 64);
ALTER INDEX companies_fields_idx SET (gin_pending_list_limit = 64);
