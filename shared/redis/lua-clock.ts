/**
 * A Lua script's first lines when it needs the time: `now`, Redis's clock in milliseconds, so pods and
 * workers with skewed clocks agree on what has expired or is due (a deployment's cooldown, a kept
 * cancel, an id handed to an organization).
 */
export const LUA_NOW_MS = `local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)`;
