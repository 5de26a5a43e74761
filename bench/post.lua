-- wrk script for the HTTP benchmarks: every request is the same JSON-RPC tools/call POST
-- (~120 bytes, no session: the bench peers keep none), to the mock, wiremock-rs and bare
-- hyper alike. Usage: see bench/run.sh.
wrk.method = "POST"
wrk.path = "/mcp"
wrk.headers["Content-Type"] = "application/json"
wrk.headers["Accept"] = "application/json, text/event-stream"
wrk.body = '{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"echo","arguments":{"text":"the quick brown fox jumps"}}}'
