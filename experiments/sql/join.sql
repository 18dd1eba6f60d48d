-- The same rows as in.sql, with a join (customers.id is unique).
SELECT count(*), sum(o.amount)
FROM orders o
JOIN customers c ON c.id = o.customer
WHERE o.amount >= {input} % 10000
  AND c.vip = 1;
