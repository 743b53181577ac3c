//! dmsh-scan: finds every shader container in a title's RomFS and ExeFS `main`,
//! keys each shader as the host does, and writes the split tables.
