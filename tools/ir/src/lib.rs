//! dmsh-ir: the translator's intermediate representation, the lifting of decoded
//! machine instructions into it, and the passes that run on it.
