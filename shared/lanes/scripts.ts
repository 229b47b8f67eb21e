/**
 * acquire-lease-1
 * KEYS[1] lease zset of one (org, pool, lane); member = lease id, score = expiry (ms)
 * ARGV[1] now (ms)  ARGV[2] ttl (ms)  ARGV[3] limit  ARGV[4] lease id
 * Returns { granted (1|0), leases held before this one, ms until the earliest lease expires,
 * and when refused the held lease ids (each starts with its acquire time, see leases.ts) }.
 */
export const ACQUIRE_LEASE = `
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', ARGV[1])
local held = redis.call('ZCARD', KEYS[1])
if held < tonumber(ARGV[3]) then
  redis.call('ZADD', KEYS[1], tonumber(ARGV[1]) + tonumber(ARGV[2]), ARGV[4])
  redis.call('PEXPIRE', KEYS[1], tonumber(ARGV[2]) * 2)
  return {1, held, 0}
end
local first = redis.call('ZRANGE', KEYS[1], 0, 0, 'WITHSCORES')
local wait = 0
if first[2] then wait = tonumber(first[2]) - tonumber(ARGV[1]) end
return {0, held, wait, redis.call('ZRANGE', KEYS[1], 0, -1)}
`;

/**
 * renew-lease-1
 * KEYS[1] lease zset  ARGV[1] new expiry (ms)  ARGV[2] ttl (ms)  ARGV[3..] lease ids
 * Pushes the expiry of leases this pod still holds; leases already released stay released (XX).
 */
export const RENEW_LEASES = `
for i = 3, #ARGV do
  redis.call('ZADD', KEYS[1], 'XX', tonumber(ARGV[1]), ARGV[i])
end
redis.call('PEXPIRE', KEYS[1], tonumber(ARGV[2]) * 2)
return 1
`;
