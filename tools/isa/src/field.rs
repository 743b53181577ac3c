//! The `Field` enum: names of the operands and modifiers an instruction form can carry.
//!
//! The same name means the same thing in every form (`Rd` is the destination register,
//! `Ftz` the flush-to-zero flag, ...); which fields a form has is in the table.

macro_rules! fields {
    ($($v:ident: $doc:literal,)*) => {
        /// A named operand or modifier of an instruction form.
        #[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
        pub enum Field {
            $(
                #[doc = $doc]
                $v,
            )*
        }

        impl Field {
            /// Every field, in declaration order.
            pub const ALL: &'static [Field] = &[$(Field::$v,)*];

            /// The name used in the encoding table.
            pub fn name(self) -> &'static str {
                match self { $(Field::$v => stringify!($v),)* }
            }

            /// Looks a field up by its table name.
            pub fn from_name(name: &str) -> Option<Field> {
                match name { $(stringify!($v) => Some(Field::$v),)* _ => None }
            }
        }
    };
}

fields! {
    Guard: "Guard predicate (bits 16-18; 7 = PT).",
    GuardNeg: "Guard predicate is negated (bit 19).",
    Rd: "Destination register (255 = RZ).",
    Rd2: "Second destination register (e.g. TEXS/TLDS second pair).",
    Ra: "First source register (reuse slot 0).",
    Rb: "Second source register (reuse slot 1).",
    Rc: "Third source register (reuse slot 2).",
    Pd: "Destination predicate.",
    Pd2: "Second destination predicate.",
    Pa: "Source predicate A.",
    Pb: "Source predicate B.",
    Pc: "Source predicate C (combined with the boolean op).",
    NotA: "Source predicate A negated.",
    NotB: "Source predicate B negated.",
    NotC: "Source predicate C negated.",
    Imm: "Immediate operand (value as the form's kind says: integer, float bits or offset).",
    Imm2: "Second immediate operand.",
    Imm3: "Third immediate operand.",
    CbufBank: "Constant-buffer bank of a `c[bank][offset]` operand.",
    CbufOffset: "Constant-buffer byte offset of a `c[bank][offset]` operand.",
    Target: "Branch target, as a signed byte offset relative to the next instruction.",
    Ftz: "Flush denormals to zero.",
    Fmz: "FMZ: zero times anything is zero.",
    Sat: "Saturate the result.",
    Rnd: "Rounding mode (RN, RM, RP, RZ) or float-to-integer rounding.",
    Cc: "Write the condition codes.",
    X: "Extended (carry-in) operation.",
    NegA: "Negate operand A.",
    NegB: "Negate operand B.",
    NegC: "Negate operand C.",
    AbsA: "Absolute value of operand A.",
    AbsB: "Absolute value of operand B.",
    AbsC: "Absolute value of operand C.",
    InvA: "Bitwise-invert operand A.",
    InvB: "Bitwise-invert operand B.",
    Cmp: "Comparison (LT, EQ, ...).",
    Bop: "Boolean operation combining with a predicate (AND, OR, XOR).",
    Bop2: "Second boolean operation.",
    Bf: "Boolean result as 1.0f instead of all ones.",
    Signed: "Integer operation is signed.",
    SignedA: "Operand A is signed.",
    SignedB: "Operand B is signed.",
    Hi: "High half of the product.",
    Mode: "Operation mode or sub-opcode (meaning per opcode: MUFU function, LOP op, XMAD mode, ...).",
    Mode2: "Second mode field.",
    Po: "Predicate output mode (LOP/LOP3: .T, .Z, .NZ).",
    XMode: "Extended min/max mode (IMNMX .XLO/.XMED/.XHI).",
    Op: "Operation of an atomic, reduction, vote, shuffle, ... .",
    Lut: "Three-input logic lookup table (LOP3).",
    Shift: "Shift amount.",
    Brev: "Bit-reverse the source.",
    W: "Wrap the shift amount.",
    Sh: "Return the shift amount (FLO.SH).",
    Inv: "Invert the result or the source.",
    Size: "Memory access size or data type.",
    DstType: "Destination data type of a conversion.",
    SrcType: "Source data type of a conversion.",
    Cache: "Cache operation of a memory access.",
    E: "64-bit (extended) address.",
    CcTest: "Condition-code test of a branch (T = always).",
    Sreg: "System register.",
    SelA: "Half or byte selector of operand A.",
    SelB: "Half or byte selector of operand B.",
    SelC: "Half or byte selector of operand C.",
    Psl: "XMAD: shift the product left by 16.",
    Mrg: "XMAD: merge the high half of B into the result.",
    P: "Patch / per-primitive flag (ALD/AST/ATTR) or similar one-bit form selector.",
    O: "Output attribute space (ALD.O).",
    Lod: "Texture level-of-detail mode.",
    Ndv: "Texture: no derivatives.",
    Nodep: "Texture: no dependency tracking (.T/.P).",
    Dc: "Texture: depth compare.",
    Aoffi: "Texture: offsets.",
    Ms: "Texture: multisample.",
    Cl: "Texture: LOD clamp.",
    Array: "Texture: array.",
    TexType: "Texture/surface dimension (1D, 2D, CUBE, ...).",
    WriteMask: "Texture component write mask.",
    Handle: "Texture/surface handle index (word index into the bindless bank).",
    Component: "Texture gather component (R, G, B, A).",
    Clamp: "Surface out-of-bounds behaviour.",
    Ba: "Surface: byte address.",
    Count: "Count or width.",
    Mask: "Mask operand.",
    Scale: "Scale or shift amount.",
    Interp: "Interpolation mode (IPA).",
    Sample: "Sample mode (IPA).",
    Level: "Memory barrier level or scope.",
    Ivall: "MEMBAR invalidation mode.",
    Sb: "Scoreboard (DEPBAR).",
    Vsel: "Video: destination selection and merge mode.",
    Keep: "Keep reference count (EXIT).",
    Lmt: "Limited branch.",
    U: "Uniform branch.",
    NoInc: "No stack increment (CAL/PRET).",
    Rz: "Use RZ / register-free addressing variant.",
    HAnd: "HSETP2: combine both halves with AND.",
    NotG: "LD: the load predicate is negated (bit 19).",
    Skew: "ISBERD skew flag.",
    Ud: "Video: unsigned destination (.UD) / VABSDIFF signed difference (.SD).",
    Mx: "VMNMX: .MX mode.",
    Sd: "VABSDIFF4: signed difference.",
    F16: "Texture: half-precision results (TEXS/TLDS/TLD4S .F16).",
    Trig: "NOP trigger flag.",
    Le: "DEPBAR: wait until the count is less or equal.",
    Reserved: "Bits nvdisasm ignores but that a round trip must keep.",
}
