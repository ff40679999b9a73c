-- wrk script: single-document insert with ten string attributes, as arangob's "document"
-- test case sends with --complexity 10 (seeds/insert-performance.txt). The same request goes to
-- Quince and to the nginx peer, so both sides parse the same bytes off the wire.
local attrs = {}
for i = 1, 10 do
  attrs[#attrs + 1] = string.format('"test%d":"some test value"', i)
end
wrk.method = "POST"
wrk.body = "{" .. table.concat(attrs, ",") .. "}"
wrk.headers["Content-Type"] = "application/json"
