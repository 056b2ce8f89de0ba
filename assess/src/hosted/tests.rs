//! Unit tests of the hosted adapters on hand-written objects.
