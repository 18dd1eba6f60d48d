-- The user's table the contention experiment copies (never writes): run
-- once against the database RUNNER_DATABASE_URL names, e.g.
--   psql "$RUNNER_DATABASE_URL" -f experiments/sql/accounts.sql
-- 10000 accounts; the experiment's clients update the first four.
CREATE TABLE IF NOT EXISTS public.accounts (
  id integer PRIMARY KEY,
  owner integer NOT NULL,
  balance integer NOT NULL
);
INSERT INTO public.accounts (id, owner, balance)
  SELECT i, 1 + (i * 37) % 1000, (i * 7919) % 10000 FROM generate_series(1, 10000) i
  ON CONFLICT (id) DO NOTHING;
ANALYZE public.accounts;
