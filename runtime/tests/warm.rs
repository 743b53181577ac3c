//! The warm-up lists (docs/runtime.md, "Warm-up lists"): the seed list then the device list,
//! in their order, resolved to the title's shaders, lines a build cannot use skipped and
//! counted; a bad or missing seed list never hides the device list; truncated and hostile
//! lists are a status and a message through the C ABI; appends are crash-safe (a child process
//! appending to a large list is killed with SIGKILL at random moments, and the list is always
//! the old one or the new one) and thread-safe.

mod common;

use std::ffi::{CStr, CString};
use std::io::BufRead;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};

use common::{hand_title, open_warm, plain_json, vertex_json, V};
use dmsh_runtime::abi::{DEPTH_GL, DEPTH_ZERO_TO_ONE};
use dmsh_runtime::warm::{Kind, List, Row, HEADER};
use dmsh_runtime::Status;

const VS: &str = "00000000000000aa";
const FS: &str = "00000000000000bb";
const CS: &str = "00000000000000cc";
const UNBUILT: &str = "00000000000000dd";

/// A title with a built vertex, fragment and compute shader and one that was not built.
fn title(name: &str) -> PathBuf {
    hand_title(
        name,
        &[
            (VS, "vertex"),
            (FS, "fragment"),
            (CS, "compute"),
            (UNBUILT, "vertex"),
        ],
        &[
            (VS, vertex_json(V, 1)),
            (FS, plain_json(V, "fragment")),
            (CS, plain_json(V, "compute")),
        ],
    )
}

fn walk(t: &dmsh_runtime::Title) -> String {
    t.warm_rows().map(|r| common::warm_line(&r)).collect()
}

#[test]
fn the_demo_warm_up_lists_walk_in_order() {
    let Some(d) = common::demo() else { return };
    let w = common::demo_warm(d, "warm-rust");
    let t = dmsh_runtime::Title::open(&dmsh_runtime::OpenOptions {
        shader_map: Some(d.map()),
        library_dir: d.split.clone(),
        chain: Some(d.chain.clone()),
        warm_seed: Some(w.seed.clone()),
        warm_device: Some(w.device.clone()),
        ..Default::default()
    })
    .unwrap();
    let mut got = walk(&t);
    for l in [List::Seed, List::Device] {
        let s = t.warm_list(l);
        let st = s.status().map_or_else(|e| e.status as u32, |()| 0);
        got += &format!("warmlist {} {st} {} {}\n", l as u32, s.rows(), s.skipped());
        println!("{l:?}: {}", s.report().to_str().unwrap());
    }
    for (g, e) in got.lines().zip(w.expected.lines()) {
        assert_eq!(g, e);
    }
    assert_eq!(got, w.expected);
    let report = t.warm_list(List::Seed).report().to_str().unwrap();
    assert!(
        report.contains("is not in the shader map") && report.contains("unknown row kind"),
        "{report}"
    );
    println!("{} warm-up rows of the demo title", t.warm_rows().len());
}

#[test]
fn rows_resolve_in_order_and_unusable_lines_are_skipped_with_reasons() {
    let d = title("warm-order");
    let seed = d.join("pso_manifest.tsv");
    std::fs::write(
        &seed,
        format!(
            "{HEADER}\nC\t{CS}\nR\t{VS}\t{FS}\tz\t0102\nS\t{FS}\nS\t{UNBUILT}\nC\t{VS}\n\
             R\t{FS}\t{FS}\tgl\t\nR\t{VS}\t{VS}\tgl\t\nS\t00000000000000ee\nR\t{VS}\t-\tgl\t\n"
        ),
    )
    .unwrap();
    let device = d.join("pso_user.tsv");
    std::fs::write(&device, format!("{HEADER}\nS\t{VS}\n")).unwrap();
    // The seed list next to the map is the default.
    let t = open_warm(&d, None, Some(&device)).unwrap();
    assert_eq!(
        walk(&t),
        format!(
            "warm 0 2 C {CS} - 0 main0 - \n\
             warm 0 3 R {VS} {FS} 1 main0_z main0 0102\n\
             warm 0 4 S {FS} - 0 main0 - \n\
             warm 0 10 R {VS} - 0 main0 - \n\
             warm 1 2 S {VS} - 0 main0 - \n"
        )
    );
    let s = t.warm_list(List::Seed);
    assert_eq!((s.status(), s.rows(), s.skipped()), (Ok(()), 4, 5));
    let r = s.report().to_str().unwrap();
    println!("{r}");
    for want in [
        "pso_manifest.tsv: 5 lines skipped",
        "line 5: ",
        "has no reflection in b-0123456789ab",
        &format!("line 6: key {VS} is a vertex shader, not compute"),
        &format!("line 7: key {FS} is a fragment shader, not vertex"),
        &format!("line 8: key {VS} is a vertex shader, not fragment"),
        "line 9: key 00000000000000ee is not in the shader map",
    ] {
        assert!(r.contains(want), "{want}");
    }
    assert_eq!(t.warm_list(List::Device).report().to_bytes(), b"");
}

#[test]
fn a_bad_or_missing_seed_list_never_hides_the_device_list() {
    let d = title("warm-seedless");
    let device = d.join("pso_user.tsv");
    std::fs::write(&device, format!("{HEADER}\nC\t{CS}\nS\t{VS}\n")).unwrap();
    let seed = d.join("pso_manifest.tsv");
    for (text, status, want) in [
        (
            None,
            Status::WarmMissing,
            "pso_manifest.tsv: no seed warm-up list",
        ),
        (
            Some("S\tx\n".to_string()),
            Status::WarmBad,
            "line 1: header",
        ),
        (
            Some(format!("{HEADER}\nS\t{VS}")),
            Status::WarmBad,
            "line 2: no newline at the end: the file is truncated",
        ),
    ] {
        match &text {
            Some(t) => std::fs::write(&seed, t).unwrap(),
            None => {
                let _ = std::fs::remove_file(&seed);
            }
        }
        let t = open_warm(&d, None, Some(&device)).unwrap();
        let e = t.warm_list(List::Seed).status().unwrap_err();
        assert_eq!(e.status, status);
        assert!(e.text().contains(want), "{e}");
        println!("seed list {status:?}: {e}");
        assert_eq!(t.warm_list(List::Device).rows(), 2);
        assert_eq!(
            t.warm_rows().map(|r| r.kind).collect::<Vec<_>>(),
            [Kind::Compute, Kind::Shader]
        );
    }
    let t = open_warm(&d, None, None).unwrap();
    let e = t.warm_list(List::Device).status().unwrap_err();
    assert_eq!(e.status, Status::WarmMissing);
    let off = dmsh_runtime::Title::open(&dmsh_runtime::OpenOptions {
        shader_map: Some(d.join("shader_map.tsv")),
        library_dir: d.clone(),
        chain: Some(V.into()),
        warm_device: Some(device.clone()),
        warm_off: true,
        ..Default::default()
    })
    .unwrap();
    assert_eq!(off.warm_rows().len(), 0);
}

/// A title opened through the C ABI with `seed` and `device`; the seed list's status, rows,
/// skipped lines and message, and the device list's rows.
fn c_open(d: &Path, seed: &Path, device: &Path) -> (Status, u32, u32, String, u32) {
    use dmsh_runtime::ffi::*;
    let cs = |p: &Path| CString::new(p.to_str().unwrap()).unwrap();
    let (map, lib, v) = (
        cs(&d.join("shader_map.tsv")),
        cs(d),
        CString::new(V).unwrap(),
    );
    let (seed, device) = (cs(seed), cs(device));
    let p = dmsh_runtime::abi::OpenParams {
        size: std::mem::size_of::<dmsh_runtime::abi::OpenParams>() as u32,
        flags: 0,
        shader_map: map.as_ptr(),
        library_dir: lib.as_ptr(),
        c1_list: std::ptr::null(),
        chain: v.as_ptr(),
        pso_manifest: seed.as_ptr(),
        pso_user: device.as_ptr(),
    };
    let mut t = std::ptr::null_mut();
    let (mut rows, mut skipped, mut msg, mut dev_rows) = (0, 0, std::ptr::null(), 0);
    // SAFETY: live pointers; the title is closed before the message's copy is returned.
    unsafe {
        assert_eq!(dmsh_open(&p, &mut t), Status::Ok);
        let s = dmsh_warm_list(t, 0, &mut rows, &mut skipped, &mut msg);
        let m = CStr::from_ptr(msg).to_str().unwrap().to_string();
        assert_eq!(
            dmsh_warm_list(
                t,
                1,
                &mut dev_rows,
                std::ptr::null_mut(),
                std::ptr::null_mut()
            ),
            Status::Ok
        );
        assert_eq!(
            dmsh_warm_list(t, 2, &mut rows, &mut skipped, &mut msg),
            Status::Argument
        );
        let n = dmsh_warm_count(t);
        for i in 0..n {
            let r = &*dmsh_warm_row(t, i);
            assert!(!r.shader.is_null() && (1..=3).contains(&r.kind));
        }
        assert!(dmsh_warm_row(t, n).is_null());
        dmsh_close(t);
        (s, rows, skipped, m, dev_rows)
    }
}

#[test]
fn truncated_and_hostile_lists_are_a_status_and_a_message_through_the_c_abi() {
    let d = title("warm-hostile");
    let seed = d.join("pso_manifest.tsv");
    let device = d.join("pso_user.tsv");
    std::fs::write(&device, format!("{HEADER}\nS\t{FS}\n")).unwrap();
    let good = format!("{HEADER}\nS\t{VS}\nR\t{VS}\t{FS}\tgl\t00ff\nC\t{CS}\nR\t{VS}\t-\tz\t\n");
    let (mut bad, mut ok) = (0, 0);
    for n in 0..=good.len() {
        std::fs::write(&seed, &good[..n]).unwrap();
        let (s, rows, _, m, dev) = c_open(&d, &seed, &device);
        assert_eq!(
            dev, 1,
            "the device list is read whatever the seed list holds"
        );
        match s {
            Status::Ok => {
                ok += 1;
                assert!(good[..n].ends_with('\n'));
                assert_eq!(rows as usize, good[..n].lines().count() - 1);
            }
            Status::WarmBad => {
                bad += 1;
                assert!(
                    m.contains("pso_manifest.tsv: ") && m.contains("line"),
                    "{m}"
                );
            }
            other => panic!("prefix {n}: {other:?} {m}"),
        }
    }
    println!(
        "{bad} of {} seed-list prefixes refused, {ok} read",
        good.len() + 1
    );
    // Only the prefixes that end a line are lists: the header and each row.
    assert_eq!(ok, 5);
    let mut noise = Vec::new();
    let mut x = 0x9e37_79b9_7f4a_7c15_u64;
    for _ in 0..100_000 {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        noise.push(x as u8);
    }
    let huge = format!("{HEADER}\n{}", format!("S\t{VS}\n").repeat(1_000_000));
    let long = format!("{HEADER}\nR\t{VS}\t{FS}\tgl\t{}\n", "ab".repeat(3000));
    let nul = format!("{HEADER}\nS\t{VS}\0\n");
    let many = format!("{HEADER}\n{}", "S\n".repeat(300_000));
    for (bytes, status, want) in [
        (noise.as_slice(), Status::WarmBad, "not UTF-8"),
        (
            huge.as_bytes(),
            Status::WarmBad,
            "larger than 16777216 bytes",
        ),
        (
            long.as_bytes(),
            Status::WarmBad,
            "line 2: longer than 4096 bytes",
        ),
        (b"\n", Status::WarmBad, "line 1: header"),
        (
            nul.as_bytes(),
            Status::Ok,
            "line 2: key \"00000000000000aa\\0\"",
        ),
        (many.as_bytes(), Status::Ok, "300000 lines skipped"),
    ] {
        std::fs::write(&seed, bytes).unwrap();
        let (s, _, skipped, m, _) = c_open(&d, &seed, &device);
        println!("{status:?} ({skipped} skipped): {}", &m[..m.len().min(160)]);
        assert_eq!(s, status, "{m}");
        assert!(m.contains(want), "{want}: {m}");
    }
}

/// The device list's text with rows `0..n` of [`row`].
fn list_text(n: usize) -> String {
    let mut s = format!("{HEADER}\n");
    for i in 0..n {
        s += &row(i).line().unwrap();
    }
    s
}

/// The `i`-th render row appended by the tests: the host's state is `i`.
fn row(i: usize) -> Row {
    Row {
        kind: Kind::Render,
        key: 0xaa,
        fragment: Some(0xbb),
        depth: DEPTH_GL,
        state: (i as u64).to_be_bytes().into(),
    }
}

#[test]
fn appends_write_the_device_list_and_the_next_open_reads_them() {
    let d = title("warm-append");
    let device = d.join("save/pso_user.tsv");
    std::fs::create_dir_all(device.parent().unwrap()).unwrap();
    let t = open_warm(&d, None, Some(&device)).unwrap();
    assert_eq!(
        t.warm_list(List::Device).status().unwrap_err().status,
        Status::WarmMissing
    );
    let z = Row {
        kind: Kind::Render,
        key: 0xaa,
        fragment: None,
        depth: DEPTH_ZERO_TO_ONE,
        state: Box::new([1, 2, 3]),
    };
    let c = Row {
        kind: Kind::Compute,
        key: 0xcc,
        fragment: None,
        depth: DEPTH_GL,
        state: Box::default(),
    };
    assert_eq!(t.warm_append(&z), Ok(true));
    assert_eq!(t.warm_append(&c), Ok(true));
    assert_eq!(
        t.warm_append(&z),
        Ok(false),
        "a listed row is not written again"
    );
    let text = std::fs::read_to_string(&device).unwrap();
    assert_eq!(
        text,
        format!("{HEADER}\nR\t{VS}\t-\tz\t010203\nC\t{CS}\n"),
        "the list as written"
    );
    let bad = Row {
        fragment: Some(1),
        ..c.clone()
    };
    assert_eq!(t.warm_append(&bad).unwrap_err().status, Status::Argument);
    // No leftover temporary file.
    let names: Vec<String> = std::fs::read_dir(device.parent().unwrap())
        .unwrap()
        .map(|e| e.unwrap().file_name().into_string().unwrap())
        .collect();
    assert_eq!(names, ["pso_user.tsv"]);
    let t2 = open_warm(&d, None, Some(&device)).unwrap();
    assert_eq!(
        walk(&t2),
        format!("warm 1 2 R {VS} - 1 main0_z - 010203\nwarm 1 3 C {CS} - 0 main0 - \n")
    );
    // A list the open could not use is started afresh.
    std::fs::write(&device, "garbage without a header").unwrap();
    assert_eq!(t.warm_append(&c), Ok(true));
    assert_eq!(
        std::fs::read_to_string(&device).unwrap(),
        format!("{HEADER}\nC\t{CS}\n")
    );
    let none = open_warm(&d, None, None).unwrap();
    let e = none.warm_append(&c).unwrap_err();
    assert_eq!(e.status, Status::WarmWrite);
    println!("{e}");
    // Through the C ABI.
    // SAFETY: a title of our own, live pointers.
    unsafe {
        use dmsh_runtime::ffi::*;
        let tp = std::ptr::addr_of!(t).cast::<DmshTitle>();
        let f = 0xbb_u64;
        let state = [0xfe_u8, 0xed];
        assert_eq!(
            dmsh_warm_append(tp, 2, 0xaa, &f, DEPTH_GL, state.as_ptr(), 2),
            Status::Ok
        );
        assert_eq!(
            dmsh_warm_append(tp, 2, 0xaa, &f, 7, state.as_ptr(), 2),
            Status::Argument
        );
        assert_eq!(
            dmsh_warm_append(tp, 1, 0xaa, std::ptr::null(), 0, std::ptr::null(), 1),
            Status::Argument
        );
    }
    assert!(std::fs::read_to_string(&device)
        .unwrap()
        .ends_with(&format!("R\t{VS}\t{FS}\tgl\tfeed\n")));
}

#[test]
fn appends_from_many_threads_each_land_once() {
    let d = title("warm-threads");
    let device = d.join("pso_user.tsv");
    let t = open_warm(&d, None, Some(&device)).unwrap();
    std::thread::scope(|s| {
        for th in 0..8 {
            let t = &t;
            s.spawn(move || {
                for i in 0..25 {
                    // Each row twice, from two threads.
                    assert!(t.warm_append(&row((th / 2) * 25 + i)).is_ok());
                }
            });
        }
    });
    let t2 = open_warm(&d, None, Some(&device)).unwrap();
    let mut got: Vec<Box<[u8]>> = t2.warm_rows().map(|r| r.state.into()).collect();
    assert_eq!(got.len(), 100, "each of 100 rows once");
    got.sort();
    let want: Vec<Box<[u8]>> = (0..100).map(|i| row(i).state).collect();
    assert_eq!(got, want);
}

const CHILD: &str = "DMSH_WARM_KILL_CHILD";

/// Kills the child when dropped (a failing assertion never leaves it running).
struct Killer(Child);

impl Drop for Killer {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

/// The child: appends rows from the list's length on, until it is killed.
fn child(dir: &Path) -> ! {
    let device = dir.join("pso_user.tsv");
    let t = open_warm(dir, None, Some(&device)).unwrap();
    let mut n = t.warm_rows().len();
    println!("ready {n}");
    loop {
        assert_eq!(t.warm_append(&row(n)), Ok(true));
        n += 1;
    }
}

#[test]
fn appends_killed_mid_write_leave_the_old_or_the_new_list() {
    if let Some(dir) = std::env::var_os(CHILD) {
        child(Path::new(&dir));
    }
    const START: usize = 20_000;
    const ROUNDS: usize = 40;
    let d = title("warm-kill");
    let device = d.join("pso_user.tsv");
    let tmp = d.join(".pso_user.tsv.tmp");
    std::fs::write(&device, list_text(START)).unwrap();
    let mut n = START;
    let (mut mid_write, mut appended) = (0, 0);
    let seed = std::hash::BuildHasher::hash_one(&std::collections::hash_map::RandomState::new(), 1);
    let mut x = seed | 1;
    for round in 0..ROUNDS {
        let mut k = Killer(
            Command::new(std::env::current_exe().unwrap())
                .args([
                    "--exact",
                    "appends_killed_mid_write_leave_the_old_or_the_new_list",
                    "--nocapture",
                    "--test-threads=1",
                ])
                .env(CHILD, &d)
                .stdout(Stdio::piped())
                .stderr(Stdio::null())
                .spawn()
                .unwrap(),
        );
        let out = std::io::BufReader::new(k.0.stdout.take().unwrap());
        // The harness prints `test NAME ... ` before it, on the same line.
        let ready = out
            .lines()
            .map(Result::unwrap)
            .find_map(|l| Some(l.rsplit_once("ready ")?.1.to_string()))
            .expect("the child opens the title");
        assert_eq!(ready, n.to_string(), "round {round}");
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        std::thread::sleep(std::time::Duration::from_micros(x % 40_000));
        k.0.kill().unwrap(); // SIGKILL
        k.0.wait().unwrap();
        if tmp.exists() {
            mid_write += 1;
            // So that the next round counts only its own.
            std::fs::remove_file(&tmp).unwrap();
        }
        let text = std::fs::read_to_string(&device).unwrap();
        let t = open_warm(&d, None, Some(&device)).unwrap();
        assert_eq!(t.warm_list(List::Device).status(), Ok(()), "round {round}");
        let m = t.warm_rows().len();
        assert!(m >= n, "round {round}: {m} rows, {n} before");
        assert!(
            text == list_text(m),
            "round {round}: the list is not rows 0..{m} of the appends"
        );
        appended += m - n;
        n = m;
    }
    println!(
        "{ROUNDS} kills: {appended} appends to a {START}-row list ({} KiB) committed, \
         {mid_write} kills landed between the temporary file and the rename; every list read \
         was the old or the new one",
        std::fs::metadata(&device).unwrap().len() / 1024
    );
    assert!(appended > 0, "the child appended");
    assert!(mid_write > 0, "some kill landed mid-write");
}
