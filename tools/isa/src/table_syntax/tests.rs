//! The table language on small tables: what it accepts, every mistake it names, names.

use super::*;

const FIELDS: &str = "Guard:pred g\nGuardNeg n\nRd:reg d\nRa:reg a\nFtz f\nRnd r\nImm i\n";

fn table(body: &str) -> Result<Syntax, Error> {
    let fields = parse_fields("f.tbl", FIELDS).unwrap();
    let src = format!("isa t 64\nindex 52_12\nguard 16_3 19\nplace Rd@0_8 Ra@8_8\n{body}");
    parse(fields, "t.tbl", &src)
}

fn err(body: &str) -> String {
    table(body).expect_err(body).to_string()
}

#[test]
fn a_small_table_parses() {
    let s = table("enum RND _ .RM .RP .RZ\nADD 0x5000000000000000 ADD{Rnd@39_2#RND} {Rd}, {Ra}")
        .unwrap();
    assert_eq!(s.forms[0].mnemonic, "ADD");
    assert_eq!(s.forms[0].fields.len(), 5);
    assert_eq!(s.enums[0].variants[0], ("Default".into(), String::new()));
}

#[test]
fn mistakes_name_file_and_line() {
    let e = err("ADD 0x5000000000000000 ADD {Rq}");
    assert!(e.starts_with("t.tbl:5: ADD: unknown field Rq"), "{e}");
    assert!(err("ADD 0x5000000000000000 ADD {Rd}{Rnd@39_2#NOPE}").contains("unknown enum NOPE"));
    assert!(err("ADD 0x5000000000000000 ADD {Rd}{Ftz@4_2=.FTZ}").contains("not 1"));
    assert!(err("ADD 0x5000000000000000 ADD {Rd@0_8}{Ra@4_8}").contains("overlaps"));
    assert!(err("ADD 0x1 ADD {Rd}").contains("inside fields"));
    assert!(err("ADD 0x5000000000000000 ADD {Imm@60_8}").contains("outside"));
    assert!(err("ADD 0x5000000000000000 ADD $NOPE").contains("unknown macro"));
    assert!(err("ADD zz ADD {Rd}").contains("bad fixed bits"));
    assert!(err("ADD").contains("bad form line"));
    let e = err("enum E .A .B .C\nADD 0x5000000000000000 ADD{Rnd@39#E} {Rd}");
    assert!(e.contains("3 entries, field Rnd only 1 bits"), "{e}");
    assert!(err("enum E .A\nADD 0x5000000000000000 ADD {Rd}").contains("enum E is never used"));
    assert!(
        err("enum E .A .B\nenum F .A .B\nADD 0x5000000000000000 ADD {Rd}").contains("same entries")
    );
    assert!(
        err("enum E .A- .A+\nADD 0x5000000000000000 ADD{Rnd@39#E} {Rd}").contains("both variant A")
    );
    assert!(err("enum E _ -\nADD 0x5000000000000000 ADD{Rnd@39#E} {Rd}").contains("needs a name"));
}

#[test]
fn variant_names() {
    let v = |t: &str| variant_name(t).unwrap();
    assert_eq!(v(".F16"), "F16");
    assert_eq!(v("SR_TID.X"), "SrTidX");
    assert_eq!(v(".F16x2.FTZ.RN"), "F16x2FtzRn");
    assert_eq!(v(".64"), "N64");
    assert_eq!(v("???6"), "N6");
    assert_eq!(v(""), "Default");
    assert_eq!(variant_name("-"), None);
    let s = table("enum E _ -=Neg\nADD 0x5000000000000000 ADD{Rnd@39#E} {Rd}").unwrap();
    assert_eq!(s.enums[0].variants[1], ("Neg".into(), "-".into()));
}

#[test]
fn memory_operand_styles() {
    let s = table(
        "LD 0x5000000000000000 LD {Rd}, {Ra:H}{Imm@20_16:h}[{Ra&Imm:m.X4}], [{Ra}.64{Imm:+}]",
    )
    .unwrap();
    let t = &s.forms[0].template;
    assert!(t
        .iter()
        .any(|k| matches!(k, Tok::Field(_, Style::MemSuffix(_, x)) if x == ".X4")));
    assert!(t.iter().any(|k| matches!(k, Tok::Field(_, Style::PlusImm))));
}
