//! `mcp-mock`: serve one scenario's script standalone. See `mcp-mock --help`.

fn main() {
    std::process::exit(mcp_mock::cli::run(std::env::args_os()));
}
