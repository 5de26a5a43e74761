//! TODO(module owner): see lib.rs Layout.
