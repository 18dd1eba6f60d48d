-- VIP customers' orders above a threshold that moves with the pair's input.
SELECT count(*), sum(amount)
FROM orders
WHERE amount >= {input} % 10000
  AND customer IN (SELECT id FROM customers WHERE vip = 1);
