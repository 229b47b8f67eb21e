/**
 * search-gate-1: one entitlement decision, atomic (Redis runs one script at a time).
 * Every key carries the org's hash tag, so a Redis Cluster keeps them in one slot.
 * KEYS[1] period count of all searches  KEYS[2] period count of platform-key searches
 * KEYS[3] period count of the member's searches (the member key, or KEYS[1] again when none)
 * KEYS[4] this minute's count (abuse limit)
 * ARGV[1] own key (1|0)  ARGV[2] allowance  ARGV[3] overage on (1|0)  ARGV[4] org monthly limit (-1 none)
 * ARGV[5] member cap (-1 none)  ARGV[6] has member (1|0)  ARGV[7] period counters' TTL (s)
 * ARGV[8] per-minute limit (-1 none)
 * Returns {'cold'} when a period counter does not exist yet (the caller seeds it from the ledger and
 * asks again), {'rate', ttl}, {'limit'}, {'cap'}, {'allowance'}, or {'ok', class}.
 */
export const SEARCH_GATE = `
local member = ARGV[6] == '1'
if redis.call('EXISTS', KEYS[1]) == 0 or redis.call('EXISTS', KEYS[2]) == 0 or (member and redis.call('EXISTS', KEYS[3]) == 0) then
  return {'cold'}
end
local rateLimit = tonumber(ARGV[8])
if rateLimit >= 0 then
  local n = tonumber(redis.call('GET', KEYS[4]) or '0')
  if n >= rateLimit then
    local ttl = redis.call('TTL', KEYS[4])
    if ttl < 1 then ttl = 1 end
    return {'rate', ttl}
  end
end
local all = tonumber(redis.call('GET', KEYS[1]))
local limit = tonumber(ARGV[4])
if limit >= 0 and all >= limit then return {'limit'} end
local cap = tonumber(ARGV[5])
if member and cap >= 0 and tonumber(redis.call('GET', KEYS[3])) >= cap then return {'cap'} end
local class = 'own_key'
if ARGV[1] ~= '1' then
  if tonumber(redis.call('GET', KEYS[2])) < tonumber(ARGV[2]) then
    class = 'allowance'
  elseif ARGV[3] == '1' then
    class = 'overage'
  else
    return {'allowance'}
  end
  redis.call('INCR', KEYS[2])
end
redis.call('INCR', KEYS[1])
if member then redis.call('INCR', KEYS[3]) end
if rateLimit >= 0 then
  if redis.call('INCR', KEYS[4]) == 1 then redis.call('EXPIRE', KEYS[4], 60) end
end
return {'ok', class}
`;

/**
 * search-release-1: gives back a reservation whose search failed (nothing was charged).
 * KEYS as above; ARGV[1] own key (1|0)  ARGV[2] has member (1|0). The minute counter is not given back.
 */
export const SEARCH_RELEASE = `
if redis.call('EXISTS', KEYS[1]) == 1 then redis.call('DECR', KEYS[1]) end
if ARGV[1] ~= '1' and redis.call('EXISTS', KEYS[2]) == 1 then redis.call('DECR', KEYS[2]) end
if ARGV[2] == '1' and redis.call('EXISTS', KEYS[3]) == 1 then redis.call('DECR', KEYS[3]) end
return 1
`;
