//! The `Opcode` enum: one variant per Maxwell mnemonic.

macro_rules! opcodes {
    ($($v:ident = $s:literal,)*) => {
        /// A Maxwell mnemonic (the first word nvdisasm prints, without modifiers).
        #[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
        #[allow(non_camel_case_types)]
        pub enum Opcode {
            $(
                #[doc = concat!("`", $s, "`")]
                $v,
            )*
        }

        impl Opcode {
            /// Every opcode, in declaration order.
            pub const ALL: &'static [Opcode] = &[$(Opcode::$v,)*];

            /// The mnemonic as nvdisasm prints it.
            pub fn name(self) -> &'static str {
                match self { $(Opcode::$v => $s,)* }
            }

            /// Looks a mnemonic up by its printed name.
            pub fn from_name(name: &str) -> Option<Opcode> {
                match name { $($s => Some(Opcode::$v),)* _ => None }
            }
        }
    };
}

opcodes! {
    Al2p = "AL2P", Ald = "ALD", Ast = "AST", Atom = "ATOM", Atoms = "ATOMS", B2r = "B2R", Bar = "BAR",
    Bfe = "BFE", Bfi = "BFI", Bpt = "BPT", Bra = "BRA", Brk = "BRK", Brx = "BRX", Cal = "CAL",
    Cctl = "CCTL", Cctll = "CCTLL", Cont = "CONT", Cs2r = "CS2R", Cset = "CSET", Csetp = "CSETP",
    Dadd = "DADD", Depbar = "DEPBAR", Dfma = "DFMA", Dmnmx = "DMNMX", Dmul = "DMUL", Dset = "DSET",
    Dsetp = "DSETP", Exit = "EXIT", F2f = "F2F", F2i = "F2I", Fadd = "FADD", Fadd32i = "FADD32I",
    Fchk = "FCHK", Fcmp = "FCMP", Ffma = "FFMA", Ffma32i = "FFMA32I", Flo = "FLO", Fmnmx = "FMNMX",
    Fmul = "FMUL", Fmul32i = "FMUL32I", Fset = "FSET", Fsetp = "FSETP", Fswzadd = "FSWZADD",
    Hadd2 = "HADD2", Hadd2_32i = "HADD2_32I", Hfma2 = "HFMA2", Hfma2_32i = "HFMA2_32I",
    Hmul2 = "HMUL2", Hmul2_32i = "HMUL2_32I", Hset2 = "HSET2", Hsetp2 = "HSETP2", I2f = "I2F",
    I2i = "I2I", Iadd = "IADD", Iadd3 = "IADD3", Iadd32i = "IADD32I", Icmp = "ICMP", Ide = "IDE",
    Imad = "IMAD", Imad32i = "IMAD32I", Imadsp = "IMADSP", Imnmx = "IMNMX", Imul = "IMUL",
    Imul32i = "IMUL32I", Ipa = "IPA", Isberd = "ISBERD", Iscadd = "ISCADD", Iscadd32i = "ISCADD32I",
    Iset = "ISET", Isetp = "ISETP", Jcal = "JCAL", Jmp = "JMP", Jmx = "JMX", Kil = "KIL", Ld = "LD",
    Ldc = "LDC", Ldg = "LDG", Ldl = "LDL", Lds = "LDS", Lea = "LEA", Lepc = "LEPC", Longjmp = "LONGJMP", Getcrsptr = "GETCRSPTR", Setcrsptr = "SETCRSPTR", Getlmembase = "GETLMEMBASE", Setlmembase = "SETLMEMBASE", Rtt = "RTT", Stp = "STP", Lop = "LOP", Lop3 = "LOP3",
    Lop32i = "LOP32I", Membar = "MEMBAR", Mov = "MOV", Mov32i = "MOV32I", Mufu = "MUFU", Nop = "NOP",
    Out = "OUT", P2r = "P2R", Pbk = "PBK", Pcnt = "PCNT", Pexit = "PEXIT", Pixld = "PIXLD",
    Plongjmp = "PLONGJMP", Popc = "POPC", Pret = "PRET", Prmt = "PRMT", Pset = "PSET",
    Psetp = "PSETP", R2b = "R2B", R2p = "R2P", Ram = "RAM", Red = "RED", Ret = "RET", Rro = "RRO",
    S2r = "S2R", Sam = "SAM", Sel = "SEL", Shf = "SHF", Shfl = "SHFL", Shl = "SHL", Shr = "SHR",
    Ssy = "SSY", St = "ST", Stg = "STG", Stl = "STL", Sts = "STS", Suatom = "SUATOM", Suld = "SULD",
    Sured = "SURED", Sust = "SUST", Sync = "SYNC", Tex = "TEX", Texs = "TEXS", Tld = "TLD",
    Tld4 = "TLD4", Tld4s = "TLD4S", Tlds = "TLDS", Tmml = "TMML", Txa = "TXA", Txd = "TXD",
    Txq = "TXQ", Vabsdiff = "VABSDIFF", Vabsdiff4 = "VABSDIFF4", Vadd = "VADD", Vmad = "VMAD",
    Vmnmx = "VMNMX", Vote = "VOTE", Vset = "VSET", Vsetp = "VSETP", Vshl = "VSHL", Vshr = "VSHR",
    Xmad = "XMAD",
}
