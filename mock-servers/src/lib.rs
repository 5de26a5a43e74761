//! mcp-mock library (work in progress).
