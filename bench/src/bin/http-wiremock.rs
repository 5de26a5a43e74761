//! The wiremock-rs peer: a `MockServer` (its defaults, request recording on) whose one mock
//! answers every POST /mcp with a JSON `tools/call` result carrying the request's id
//! ([`mcp_bench::reply_to`]). Prints `listening <url>` and serves until killed. What the
//! HTTP mock with its recording on is held against (target: >= wiremock-rs).

use wiremock::matchers::{method, path};
use wiremock::{Mock, MockServer, Request, ResponseTemplate};

fn main() -> std::io::Result<()> {
    mcp_bench::runtime()?.block_on(serve());
    Ok(())
}

async fn serve() {
    let server = MockServer::start().await;
    Mock::given(method("POST"))
        .and(path("/mcp"))
        .respond_with(|request: &Request| {
            ResponseTemplate::new(200).set_body_raw(mcp_bench::reply_to(&request.body), "application/json")
        })
        .mount(&server)
        .await;
    mcp_bench::listening(&format!("{}/mcp", server.uri()));
    std::future::pending::<()>().await;
}
