//! Property tests of the snapshot reader.
