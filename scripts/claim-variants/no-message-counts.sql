-- For npm run bench:claim-path -- --ab: MEASUREMENT ONLY: the message counter's trigger off.
ALTER TABLE messages DISABLE TRIGGER messages_count_added;
