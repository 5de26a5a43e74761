-- wrk script for the HTTP mock benchmark: every request is a JSON-RPC tools/list POST
-- (no session: the bench scenario issues none). Usage: see bench/run.sh.
wrk.method = "POST"
wrk.path = "/mcp"
wrk.headers["Content-Type"] = "application/json"
wrk.headers["Accept"] = "application/json, text/event-stream"
wrk.body = '{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{}}'
