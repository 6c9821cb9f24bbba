-- Mail to the shared address that answers none of our outreach messages is threaded by the Message-IDs it
-- names among every company's messages (only then is its company known): found by this index, not a scan.
CREATE INDEX inbox_messages_message_id ON inbox_messages (message_id);
