-- The same rows as in.sql, with a correlated EXISTS.
SELECT count(*), sum(o.amount)
FROM orders o
WHERE o.amount >= {input} % 10000
  AND EXISTS (SELECT 1 FROM customers c WHERE c.id = o.customer AND c.vip = 1);
