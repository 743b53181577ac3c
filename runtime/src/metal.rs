//! The macOS Metal layer (feature `metal`, macOS only; docs/runtime.md, "The Metal layer"):
//! libraries loaded when the program is made (never on the submit path: seed 002), functions
//! by the entry name the lookup gives, compute and render pipelines cached, a background
//! thread that builds the warm-up rows in order, failures cached and reported once with their
//! keys, and on-the-spot builds appended to the device list.
//!
//! Type-checked for aarch64-apple-darwin only; never linked or run against Metal here.

use std::collections::HashMap;
use std::ffi::CStr;
use std::hash::Hash;
use std::sync::{Arc, Mutex, MutexGuard};

use objc2::rc::{autoreleasepool, Retained};
use objc2::runtime::ProtocolObject;
use objc2_foundation::{NSError, NSString, NSURL};
use objc2_metal::{
    MTLComputePipelineState, MTLDevice, MTLFunction, MTLLibrary, MTLRenderPipelineDescriptor,
    MTLRenderPipelineState,
};

use crate::abi::{DEPTH_GL, DEPTH_ZERO_TO_ONE};
use crate::error::{Error, Status};
use crate::warm::{Kind, Row};
use crate::Title;

/// A Metal device.
pub type Device = ProtocolObject<dyn MTLDevice>;
/// A Metal function.
pub type Function = ProtocolObject<dyn MTLFunction>;
/// A compute pipeline.
pub type ComputePipeline = ProtocolObject<dyn MTLComputePipelineState>;
/// A render pipeline.
pub type RenderPipeline = ProtocolObject<dyn MTLRenderPipelineState>;

/// The host's part of a render pipeline: from the row's state bytes (its own encoding of
/// NVN's settings) it sets the descriptor's vertex descriptor, colour attachment formats and
/// blend, depth / stencil formats and sample count. The layer has set the functions.
pub type Describe = dyn Fn(&Row, &MTLRenderPipelineDescriptor) -> Result<(), String> + Send + Sync;

/// Where failures go (the host's red log); each failure is reported once.
pub type Report = dyn Fn(&Error) + Send + Sync;

fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|e| e.into_inner())
}

fn ns_error(e: &NSError) -> String {
    e.localizedDescription().to_string()
}

/// A shader's `MTLLibrary` and the functions looked up in it.
pub struct Library {
    library: Retained<ProtocolObject<dyn MTLLibrary>>,
    functions: Mutex<HashMap<String, Retained<Function>>>,
}

impl Library {
    /// The function named `entry` (the entry point a lookup gives: `main0` / `main0_z`).
    pub fn function(&self, entry: &CStr) -> Option<Retained<Function>> {
        let name = entry.to_str().ok()?;
        if let Some(f) = lock(&self.functions).get(name) {
            return Some(f.clone());
        }
        let f = self
            .library
            .newFunctionWithName(&NSString::from_str(name))?;
        Some(
            lock(&self.functions)
                .entry(name.to_string())
                .or_insert(f)
                .clone(),
        )
    }
}

/// What a warm-up pass did.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Prewarmed {
    /// Rows built (or already built).
    pub built: usize,
    /// Rows that failed (each reported once).
    pub failed: usize,
}

/// The Metal objects of one open title.
pub struct Metal {
    device: Retained<Device>,
    title: Arc<Title>,
    describe: Arc<Describe>,
    report: Arc<Report>,
    libraries: Mutex<HashMap<u64, Arc<Library>>>,
    compute: Mutex<HashMap<u64, Retained<ComputePipeline>>>,
    render: Mutex<HashMap<Row, Retained<RenderPipeline>>>,
    failed: Mutex<HashMap<Row, Error>>,
}

/// A cached value (a library, pipeline or failure).
fn cached<K: Hash + Eq, V: Clone>(m: &Mutex<HashMap<K, V>>, k: &K) -> Option<V> {
    lock(m).get(k).cloned()
}

impl Metal {
    /// The layer for `title` on `device`.
    pub fn new(
        device: Retained<Device>,
        title: Arc<Title>,
        describe: Arc<Describe>,
        report: Arc<Report>,
    ) -> Arc<Metal> {
        Arc::new(Metal {
            device,
            title,
            describe,
            report,
            libraries: Mutex::default(),
            compute: Mutex::default(),
            render: Mutex::default(),
            failed: Mutex::default(),
        })
    }

    /// `cache[k]`, else `make` for `row` unless it failed before: a success is cached (and,
    /// made on the spot, appended to the device list); a new failure is cached and reported
    /// once, naming the row's keys. Nothing is locked while `make` runs.
    fn once<K: Hash + Eq + Clone, T: Clone>(
        &self,
        cache: &Mutex<HashMap<K, T>>,
        k: &K,
        row: &Row,
        on_the_spot: bool,
        make: impl FnOnce() -> Result<T, String>,
    ) -> Result<T, Error> {
        if let Some(v) = cached(cache, k) {
            return Ok(v);
        }
        if let Some(e) = cached(&self.failed, row) {
            return Err(e);
        }
        match make() {
            Ok(v) => {
                let v = lock(cache).entry(k.clone()).or_insert(v).clone();
                if on_the_spot {
                    if let Err(e) = self.title.warm_append(row) {
                        (self.report)(&e);
                    }
                }
                Ok(v)
            }
            Err(why) => {
                let line = row.line().unwrap_or_default().trim_end().replace('\t', " ");
                let e = Error::new(Status::Metal, format!("{line}: {why}"));
                let new = lock(&self.failed).insert(row.clone(), e.clone()).is_none();
                if new {
                    (self.report)(&e);
                }
                Err(e)
            }
        }
    }

    /// The shader's library, loaded now if it was not: call it when the game makes the
    /// program (`nvnProgramSetShaders`), never on the submit path.
    pub fn program(&self, key: u64) -> Result<Arc<Library>, Error> {
        self.library(key, true)
    }

    fn library(&self, key: u64, on_the_spot: bool) -> Result<Arc<Library>, Error> {
        let row = Row::keyed(Kind::Shader, key);
        self.once(&self.libraries, &key, &row, on_the_spot, || {
            let found = self
                .title
                .lookup(key, DEPTH_GL)
                .map_err(|e| e.text().into_owned())?;
            let path = found
                .shader
                .library_path()
                .to_str()
                .map_err(|_| "the library path is not UTF-8".to_string())?;
            let url = NSURL::fileURLWithPath(&NSString::from_str(path));
            let library = self
                .device
                .newLibraryWithURL_error(&url)
                .map_err(|e| format!("{path}: {}", ns_error(&e)))?;
            Ok(Arc::new(Library {
                library,
                functions: Mutex::default(),
            }))
        })
    }

    /// The function of shader `key` for depth mode `depth` (its library loaded if need be).
    fn function(
        &self,
        key: u64,
        depth: u32,
        on_the_spot: bool,
    ) -> Result<Retained<Function>, String> {
        let lib = self
            .library(key, on_the_spot)
            .map_err(|e| e.text().into_owned())?;
        let found = self
            .title
            .lookup(key, depth)
            .map_err(|e| e.text().into_owned())?;
        lib.function(found.entry).ok_or_else(|| {
            format!(
                "the library of {} has no function {:?}",
                crate::key::to_string(key),
                found.entry
            )
        })
    }

    /// The compute pipeline of shader `key` (built now if it was not, and then appended to
    /// the device list).
    pub fn compute_pipeline(&self, key: u64) -> Result<Retained<ComputePipeline>, Error> {
        self.compute(key, true)
    }

    fn compute(&self, key: u64, on_the_spot: bool) -> Result<Retained<ComputePipeline>, Error> {
        let row = Row::keyed(Kind::Compute, key);
        self.once(&self.compute, &key, &row, on_the_spot, || {
            let f = self.function(key, DEPTH_GL, on_the_spot)?;
            self.device
                .newComputePipelineStateWithFunction_error(&f)
                .map_err(|e| ns_error(&e))
        })
    }

    /// The render pipeline of an `R` row (built now if it was not, and then appended to the
    /// device list); the host's [`Describe`] fills in its settings.
    pub fn render_pipeline(&self, row: &Row) -> Result<Retained<RenderPipeline>, Error> {
        self.render(row, true)
    }

    fn render(&self, row: &Row, on_the_spot: bool) -> Result<Retained<RenderPipeline>, Error> {
        if row.kind != Kind::Render {
            return Err(Error::fixed(
                Status::Argument,
                c"a render pipeline is made from an R row",
            ));
        }
        self.once(&self.render, row, row, on_the_spot, || {
            let vf = self.function(row.key, row.depth, on_the_spot)?;
            let ff = row
                .fragment
                .map(|f| self.function(f, DEPTH_GL, on_the_spot))
                .transpose()?;
            let d = MTLRenderPipelineDescriptor::new();
            d.setVertexFunction(Some(&vf));
            d.setFragmentFunction(ff.as_deref());
            (self.describe)(row, &d).map_err(|e| format!("the host's settings: {e}"))?;
            self.device
                .newRenderPipelineStateWithDescriptor_error(&d)
                .map_err(|e| ns_error(&e))
        })
    }

    /// Builds one warm-up row (a shader's library and functions, or its pipeline).
    fn build(&self, row: &Row) -> Result<(), Error> {
        match row.kind {
            Kind::Shader => {
                let lib = self.library(row.key, false)?;
                let found = self.title.lookup(row.key, DEPTH_GL).map_err(Clone::clone)?;
                let s = found.shader;
                for depth in [DEPTH_GL, DEPTH_ZERO_TO_ONE] {
                    let _ = lib.function(s.entry(depth));
                }
                Ok(())
            }
            Kind::Compute => self.compute(row.key, false).map(drop),
            Kind::Render => self.render(row, false).map(drop),
        }
    }

    /// Walks the title's warm-up rows in order (seed list, then device list) on a
    /// background thread, building each; failures are cached and reported once.
    pub fn prewarm(self: &Arc<Self>) -> std::io::Result<std::thread::JoinHandle<Prewarmed>> {
        let m = Arc::clone(self);
        std::thread::Builder::new()
            .name("dmsh-prewarm".into())
            .spawn(move || {
                let mut done = Prewarmed::default();
                for r in m.title.warm_rows() {
                    let row = Row {
                        kind: r.kind,
                        key: r.shader.shader().key,
                        fragment: r.fragment.map(|f| f.shader().key),
                        depth: r.depth,
                        state: r.state.into(),
                    };
                    match autoreleasepool(|_| m.build(&row)) {
                        Ok(()) => done.built += 1,
                        Err(_) => done.failed += 1,
                    }
                }
                done
            })
    }
}
