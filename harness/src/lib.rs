//! mcp-harness library (work in progress).
