-- For npm run bench:claim-path -- --ab: the A/A check (nothing changed).
SELECT 1;
