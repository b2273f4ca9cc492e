-- Label group names are unique in a workspace ignoring case, like label names (409 conflict).
CREATE UNIQUE INDEX tag_groups_name_key ON tag_groups (workspace_id, lower(name));
