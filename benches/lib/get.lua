-- wrk script: read a random preloaded document by key. The key range comes from the
-- environment (BENCH_KEYS); the path prefix from wrk's URL.
local keys = tonumber(os.getenv("BENCH_KEYS") or "10000")
local counter = 0
math.randomseed(os.time())
request = function()
  counter = counter + 1
  local k = math.random(0, keys - 1)
  return wrk.format("GET", wrk.path .. "k" .. k)
end
