//! A throw-away PostgreSQL cluster for tests. (Being written.)
