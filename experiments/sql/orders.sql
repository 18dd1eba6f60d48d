-- The data every formulation reads: 1000 customers (every tenth a VIP)
-- and {rows} orders, generated the same way on SQLite and PostgreSQL.
-- Runs once per fork, committed, in the strategy's own schema (PostgreSQL)
-- or private in-memory database (SQLite).
CREATE TABLE customers (id integer PRIMARY KEY, vip integer NOT NULL);
INSERT INTO customers (id, vip)
  WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < 1000)
  SELECT i, CASE WHEN i % 10 = 0 THEN 1 ELSE 0 END FROM n;
CREATE TABLE orders (
  id integer PRIMARY KEY,
  customer integer NOT NULL,
  amount integer NOT NULL
);
INSERT INTO orders (id, customer, amount)
  WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < {rows})
  SELECT i, 1 + (i * 37) % 1000, (i * 7919) % 10000 FROM n;
CREATE INDEX orders_customer ON orders (customer);
ANALYZE customers;
ANALYZE orders;
