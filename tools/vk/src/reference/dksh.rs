//! The dksh corpus' compute shaders as runnable cases (filled in below).
