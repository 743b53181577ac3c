//! The Vulkan instance + device: selection, enabled features, and the small helpers every job
//! uses (host-visible buffers, one-shot command submission, cleanup on every path).

use std::ffi::{c_char, CStr};
use std::sync::{Mutex, OnceLock};

use ash::vk;
use serde::Serialize;

use crate::error::{Error, VkCtx};

/// What the selected device offers, as far as translated shaders care.
#[derive(Debug, Clone, Default, Serialize)]
pub struct DeviceInfo {
    /// `deviceName` (lavapipe: `llvmpipe (LLVM 15.0.6, 256 bits)`).
    pub name: String,
    /// cpu | integrated | discrete | virtual | other.
    pub device_type: String,
    /// Device API version, `major.minor.patch`.
    pub api_version: String,
    /// Driver name and info (Vulkan 1.2 driver properties).
    pub driver: String,
    /// Default subgroup size (lavapipe 8, NVIDIA and Apple 32).
    pub subgroup_size: u32,
    /// Smallest subgroup size a pipeline can require (subgroup size control), else `subgroup_size`.
    pub min_subgroup_size: u32,
    /// Largest subgroup size a pipeline can require, else `subgroup_size`.
    pub max_subgroup_size: u32,
    /// Subgroup operations are available in compute shaders.
    pub subgroup_in_compute: bool,
    /// Subgroup operations are available in fragment shaders.
    pub subgroup_in_fragment: bool,
    /// Subgroup operations are available in vertex shaders.
    pub subgroup_in_vertex: bool,
    /// Names of supported subgroup feature bits (basic, vote, arithmetic, ballot, shuffle, …).
    pub subgroup_ops: Vec<String>,
    /// A compute pipeline may require a subgroup size (`computeFullSubgroups` / size control).
    pub subgroup_size_control: bool,
    /// Enabled features the translator relies on (name → enabled).
    pub features: Vec<(String, bool)>,
    /// `maxComputeSharedMemorySize`.
    pub max_shared_bytes: u32,
    /// `maxStorageBufferRange`.
    pub max_storage_buffer_range: u32,
    /// `maxUniformBufferRange`.
    pub max_uniform_buffer_range: u32,
    /// `maxComputeWorkGroupCount`.
    pub max_workgroup_count: [u32; 3],
    /// `maxComputeWorkGroupSize`.
    pub max_workgroup_size: [u32; 3],
    /// `maxComputeWorkGroupInvocations`.
    pub max_workgroup_invocations: u32,
    /// Enabled device extensions.
    pub extensions: Vec<String>,
}

impl DeviceInfo {
    /// Pretty JSON.
    pub fn to_json(&self) -> String {
        serde_json::to_string_pretty(self).unwrap_or_default()
    }

    /// Whether a named feature (e.g. `bufferDeviceAddress`, `shaderFloat64`) is enabled.
    pub fn has(&self, feature: &str) -> bool {
        self.features.iter().any(|(n, on)| n == feature && *on)
    }

    /// Whether a pipeline can run with 32-lane subgroups, as a Maxwell warp needs.
    pub fn can_run_warp32(&self) -> bool {
        self.subgroup_in_compute
            && (self.subgroup_size == 32
                || (self.subgroup_size_control
                    && self.min_subgroup_size <= 32
                    && self.max_subgroup_size >= 32))
    }
}

/// An open Vulkan device with one queue. Jobs on one `Device` are serialised by a mutex, so
/// test threads can share one (see [`shared`]).
pub struct Device {
    _entry: ash::Entry,
    pub(crate) instance: ash::Instance,
    pub(crate) physical: vk::PhysicalDevice,
    pub(crate) device: ash::Device,
    pub(crate) queue: vk::Queue,
    pub(crate) queue_family: u32,
    pub(crate) mem_props: vk::PhysicalDeviceMemoryProperties,
    pub(crate) bda: bool,
    pub(crate) timeout_s: u64,
    pub(crate) lock: Mutex<()>,
    /// Set when GPU work timed out: the work may still run, so nothing it uses may be freed
    /// and no further job is accepted.
    pub(crate) lost: std::sync::atomic::AtomicBool,
    info: DeviceInfo,
}

impl std::fmt::Debug for Device {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Device").field("info", &self.info).finish()
    }
}

/// The process-wide device (created on first use; `DMSH_VK_DEVICE` picks it).
pub fn shared() -> Result<&'static Device, Error> {
    static DEV: OnceLock<Result<Device, Error>> = OnceLock::new();
    DEV.get_or_init(Device::new).as_ref().map_err(Clone::clone)
}

fn ver(v: u32) -> String {
    format!(
        "{}.{}.{}",
        vk::api_version_major(v),
        vk::api_version_minor(v),
        vk::api_version_patch(v)
    )
}

fn cstr_array(a: &[c_char]) -> String {
    let bytes: Vec<u8> = a
        .iter()
        .take_while(|&&c| c != 0)
        .map(|&c| c as u8)
        .collect();
    String::from_utf8_lossy(&bytes).into_owned()
}

impl Device {
    /// Opens the device named by `DMSH_VK_DEVICE` (a case-insensitive substring of the device
    /// name), else the first one. `DMSH_VK_VALIDATION=1` loads the Khronos validation layer when
    /// installed; `DMSH_VK_NO_ROBUST=1` leaves robustBufferAccess off; `DMSH_VK_TIMEOUT_S` sets
    /// the fence timeout (default 60).
    pub fn new() -> Result<Device, Error> {
        let want = std::env::var("DMSH_VK_DEVICE")
            .ok()
            .filter(|s| !s.is_empty());
        Self::open(want.as_deref())
    }

    /// Opens the first device whose name contains `name` (case-insensitive), or the first one.
    pub fn open(name: Option<&str>) -> Result<Device, Error> {
        // SAFETY: loading the system loader; all later calls follow the Vulkan spec's rules.
        unsafe { Self::open_inner(name) }
    }

    unsafe fn open_inner(name: Option<&str>) -> Result<Device, Error> {
        let entry = ash::Entry::load()
            .map_err(|e| Error::NoDevice(format!("cannot load the Vulkan loader: {e}")))?;
        let inst_ver = entry
            .try_enumerate_instance_version()
            .ok()
            .flatten()
            .unwrap_or(vk::API_VERSION_1_0);
        if inst_ver < vk::API_VERSION_1_2 {
            return Err(Error::NoDevice(format!(
                "Vulkan loader is {}; 1.2 needed",
                ver(inst_ver)
            )));
        }
        let api = inst_ver.min(vk::API_VERSION_1_3);
        let app = vk::ApplicationInfo::default()
            .application_name(c"dmsh")
            .engine_name(c"dmsh-vk")
            .api_version(api);
        let inst_exts = entry
            .enumerate_instance_extension_properties(None)
            .unwrap_or_default();
        let has_inst_ext = |n: &CStr| {
            inst_exts
                .iter()
                .any(|e| e.extension_name_as_c_str().ok() == Some(n))
        };
        let mut exts: Vec<*const c_char> = Vec::new();
        let mut flags = vk::InstanceCreateFlags::empty();
        if has_inst_ext(ash::khr::portability_enumeration::NAME) {
            exts.push(ash::khr::portability_enumeration::NAME.as_ptr());
            flags |= vk::InstanceCreateFlags::ENUMERATE_PORTABILITY_KHR;
        }
        let mut layers: Vec<*const c_char> = Vec::new();
        if std::env::var("DMSH_VK_VALIDATION").is_ok_and(|v| v == "1") {
            let l = entry
                .enumerate_instance_layer_properties()
                .unwrap_or_default();
            let v = c"VK_LAYER_KHRONOS_validation";
            if l.iter().any(|p| p.layer_name_as_c_str().ok() == Some(v)) {
                layers.push(v.as_ptr());
            } else {
                eprintln!("dmsh-vk: DMSH_VK_VALIDATION=1 but VK_LAYER_KHRONOS_validation is not installed");
            }
        }
        let ici = vk::InstanceCreateInfo::default()
            .application_info(&app)
            .enabled_extension_names(&exts)
            .enabled_layer_names(&layers)
            .flags(flags);
        let instance = entry
            .create_instance(&ici, None)
            .map_err(|e| Error::NoDevice(format!("vkCreateInstance: {e:?}")))?;
        match Self::open_device(entry.clone(), instance.clone(), name) {
            Ok(d) => Ok(d),
            Err(e) => {
                instance.destroy_instance(None);
                Err(e)
            }
        }
    }

    unsafe fn open_device(
        entry: ash::Entry,
        instance: ash::Instance,
        name: Option<&str>,
    ) -> Result<Device, Error> {
        let pds = instance
            .enumerate_physical_devices()
            .map_err(|e| Error::NoDevice(format!("vkEnumeratePhysicalDevices: {e:?}")))?;
        let mut names = Vec::new();
        let mut chosen = None;
        for &pd in &pds {
            let p = instance.get_physical_device_properties(pd);
            let n = cstr_array(&p.device_name);
            let ok = match name {
                Some(w) => n.to_lowercase().contains(&w.to_lowercase()),
                None => true,
            };
            if ok && chosen.is_none() && p.api_version >= vk::API_VERSION_1_2 {
                chosen = Some((pd, p));
            }
            names.push(format!("{n} (Vulkan {})", ver(p.api_version)));
        }
        let Some((pd, props)) = chosen else {
            return Err(Error::NoDevice(match name {
                Some(w) => format!(
                    "no Vulkan 1.2 device matches DMSH_VK_DEVICE={w:?}; devices: [{}]",
                    names.join(", ")
                ),
                None => format!("no Vulkan 1.2 device; devices: [{}]", names.join(", ")),
            }));
        };
        let dev_api = props.api_version;

        // Properties: subgroups, size control, driver.
        let mut sub = vk::PhysicalDeviceSubgroupProperties::default();
        let mut ssc = vk::PhysicalDeviceSubgroupSizeControlProperties::default();
        let mut drv = vk::PhysicalDeviceDriverProperties::default();
        {
            let mut p2 = vk::PhysicalDeviceProperties2::default()
                .push_next(&mut sub)
                .push_next(&mut drv);
            if dev_api >= vk::API_VERSION_1_3 {
                p2 = p2.push_next(&mut ssc);
            }
            instance.get_physical_device_properties2(pd, &mut p2);
        }

        // Extensions.
        let dev_exts = instance
            .enumerate_device_extension_properties(pd)
            .unwrap_or_default();
        let has_ext = |n: &CStr| {
            dev_exts
                .iter()
                .any(|e| e.extension_name_as_c_str().ok() == Some(n))
        };
        let mut ext_names: Vec<&CStr> = Vec::new();
        for n in [
            c"VK_KHR_portability_subset",
            ash::ext::shader_atomic_float::NAME,
            ash::khr::shader_clock::NAME,
            ash::ext::shader_stencil_export::NAME,
            ash::ext::shader_viewport_index_layer::NAME,
            ash::ext::shader_demote_to_helper_invocation::NAME,
        ] {
            if has_ext(n) {
                ext_names.push(n);
            }
        }
        let has_atomic_float = ext_names.contains(&ash::ext::shader_atomic_float::NAME);

        // Features: query the core 1.0–1.3 structs, enable everything supported.
        let mut f11 = vk::PhysicalDeviceVulkan11Features::default();
        let mut f12 = vk::PhysicalDeviceVulkan12Features::default();
        let mut f13 = vk::PhysicalDeviceVulkan13Features::default();
        let mut fa = vk::PhysicalDeviceShaderAtomicFloatFeaturesEXT::default();
        let core = {
            let mut f2 = vk::PhysicalDeviceFeatures2::default()
                .push_next(&mut f11)
                .push_next(&mut f12);
            if dev_api >= vk::API_VERSION_1_3 {
                f2 = f2.push_next(&mut f13);
            }
            if has_atomic_float {
                f2 = f2.push_next(&mut fa);
            }
            instance.get_physical_device_features2(pd, &mut f2);
            f2.features
        };
        let mut core = core;
        if std::env::var("DMSH_VK_NO_ROBUST").is_ok_and(|v| v == "1") {
            core.robust_buffer_access = vk::FALSE;
        }
        f11.p_next = std::ptr::null_mut();
        f12.p_next = std::ptr::null_mut();
        f13.p_next = std::ptr::null_mut();
        fa.p_next = std::ptr::null_mut();
        // Never ask for capture/replay or multi-device BDA: not needed, and rejected by some drivers.
        f12.buffer_device_address_capture_replay = vk::FALSE;
        f12.buffer_device_address_multi_device = vk::FALSE;

        let on = |b: vk::Bool32| b == vk::TRUE;
        let features: Vec<(String, bool)> = vec![
            ("shaderInt64".into(), on(core.shader_int64)),
            ("shaderFloat64".into(), on(core.shader_float64)),
            ("shaderInt16".into(), on(core.shader_int16)),
            ("shaderInt8".into(), on(f12.shader_int8)),
            ("shaderFloat16".into(), on(f12.shader_float16)),
            ("bufferDeviceAddress".into(), on(f12.buffer_device_address)),
            (
                "storageBuffer8BitAccess".into(),
                on(f12.storage_buffer8_bit_access),
            ),
            (
                "storageBuffer16BitAccess".into(),
                on(f11.storage_buffer16_bit_access),
            ),
            ("vulkanMemoryModel".into(), on(f12.vulkan_memory_model)),
            (
                "vulkanMemoryModelDeviceScope".into(),
                on(f12.vulkan_memory_model_device_scope),
            ),
            ("scalarBlockLayout".into(), on(f12.scalar_block_layout)),
            (
                "shaderSubgroupExtendedTypes".into(),
                on(f12.shader_subgroup_extended_types),
            ),
            ("subgroupSizeControl".into(), on(f13.subgroup_size_control)),
            (
                "computeFullSubgroups".into(),
                on(f13.compute_full_subgroups),
            ),
            ("robustBufferAccess".into(), on(core.robust_buffer_access)),
            (
                "fragmentStoresAndAtomics".into(),
                on(core.fragment_stores_and_atomics),
            ),
            (
                "vertexPipelineStoresAndAtomics".into(),
                on(core.vertex_pipeline_stores_and_atomics),
            ),
            ("geometryShader".into(), on(core.geometry_shader)),
            ("multiViewport".into(), on(core.multi_viewport)),
            ("shaderOutputLayer".into(), on(f12.shader_output_layer)),
            (
                "shaderOutputViewportIndex".into(),
                on(f12.shader_output_viewport_index),
            ),
            ("sampleRateShading".into(), on(core.sample_rate_shading)),
            ("tessellationShader".into(), on(core.tessellation_shader)),
            (
                "shaderImageGatherExtended".into(),
                on(core.shader_image_gather_extended),
            ),
            (
                "shaderStorageImageReadWithoutFormat".into(),
                on(core.shader_storage_image_read_without_format),
            ),
            (
                "shaderStorageImageWriteWithoutFormat".into(),
                on(core.shader_storage_image_write_without_format),
            ),
            (
                "shaderDemoteToHelperInvocation".into(),
                on(f13.shader_demote_to_helper_invocation),
            ),
            (
                "shaderBufferFloat32AtomicAdd".into(),
                on(fa.shader_buffer_float32_atomic_add),
            ),
            (
                "shaderSharedFloat32AtomicAdd".into(),
                on(fa.shader_shared_float32_atomic_add),
            ),
        ];

        // Queue: prefer a graphics+compute family (render jobs need graphics).
        let fams = instance.get_physical_device_queue_family_properties(pd);
        let gc = vk::QueueFlags::GRAPHICS | vk::QueueFlags::COMPUTE;
        let qf = fams
            .iter()
            .position(|f| f.queue_flags.contains(gc))
            .or_else(|| {
                fams.iter()
                    .position(|f| f.queue_flags.contains(vk::QueueFlags::COMPUTE))
            })
            .ok_or_else(|| Error::NoDevice("no compute queue".into()))? as u32;
        let prio = [1.0f32];
        let qci = [vk::DeviceQueueCreateInfo::default()
            .queue_family_index(qf)
            .queue_priorities(&prio)];
        let ext_ptrs: Vec<*const c_char> = ext_names.iter().map(|n| n.as_ptr()).collect();
        let mut dci = vk::DeviceCreateInfo::default()
            .queue_create_infos(&qci)
            .enabled_extension_names(&ext_ptrs)
            .enabled_features(&core)
            .push_next(&mut f11)
            .push_next(&mut f12);
        if dev_api >= vk::API_VERSION_1_3 {
            dci = dci.push_next(&mut f13);
        }
        if has_atomic_float {
            dci = dci.push_next(&mut fa);
        }
        let device = instance
            .create_device(pd, &dci, None)
            .vk("vkCreateDevice")?;
        let queue = device.get_device_queue(qf, 0);
        let mem_props = instance.get_physical_device_memory_properties(pd);

        let mut ops = Vec::new();
        for (bit, n) in [
            (vk::SubgroupFeatureFlags::BASIC, "basic"),
            (vk::SubgroupFeatureFlags::VOTE, "vote"),
            (vk::SubgroupFeatureFlags::ARITHMETIC, "arithmetic"),
            (vk::SubgroupFeatureFlags::BALLOT, "ballot"),
            (vk::SubgroupFeatureFlags::SHUFFLE, "shuffle"),
            (
                vk::SubgroupFeatureFlags::SHUFFLE_RELATIVE,
                "shuffle_relative",
            ),
            (vk::SubgroupFeatureFlags::CLUSTERED, "clustered"),
            (vk::SubgroupFeatureFlags::QUAD, "quad"),
        ] {
            if sub.supported_operations.contains(bit) {
                ops.push(n.to_string());
            }
        }
        let size_control = on(f13.subgroup_size_control)
            && ssc
                .required_subgroup_size_stages
                .contains(vk::ShaderStageFlags::COMPUTE);
        let info = DeviceInfo {
            name: cstr_array(&props.device_name),
            device_type: match props.device_type {
                vk::PhysicalDeviceType::CPU => "cpu",
                vk::PhysicalDeviceType::INTEGRATED_GPU => "integrated",
                vk::PhysicalDeviceType::DISCRETE_GPU => "discrete",
                vk::PhysicalDeviceType::VIRTUAL_GPU => "virtual",
                _ => "other",
            }
            .into(),
            api_version: ver(dev_api),
            driver: format!(
                "{} {}",
                cstr_array(&drv.driver_name),
                cstr_array(&drv.driver_info)
            ),
            subgroup_size: sub.subgroup_size,
            min_subgroup_size: if size_control {
                ssc.min_subgroup_size
            } else {
                sub.subgroup_size
            },
            max_subgroup_size: if size_control {
                ssc.max_subgroup_size
            } else {
                sub.subgroup_size
            },
            subgroup_in_compute: sub.supported_stages.contains(vk::ShaderStageFlags::COMPUTE),
            subgroup_in_fragment: sub
                .supported_stages
                .contains(vk::ShaderStageFlags::FRAGMENT),
            subgroup_in_vertex: sub.supported_stages.contains(vk::ShaderStageFlags::VERTEX),
            subgroup_ops: ops,
            subgroup_size_control: size_control,
            features,
            max_shared_bytes: props.limits.max_compute_shared_memory_size,
            max_storage_buffer_range: props.limits.max_storage_buffer_range,
            max_uniform_buffer_range: props.limits.max_uniform_buffer_range,
            max_workgroup_count: props.limits.max_compute_work_group_count,
            max_workgroup_size: props.limits.max_compute_work_group_size,
            max_workgroup_invocations: props.limits.max_compute_work_group_invocations,
            extensions: ext_names
                .iter()
                .map(|n| n.to_string_lossy().into_owned())
                .collect(),
        };
        let timeout_s = std::env::var("DMSH_VK_TIMEOUT_S")
            .ok()
            .and_then(|s| s.parse().ok())
            .unwrap_or(60);
        Ok(Device {
            _entry: entry,
            instance,
            physical: pd,
            device,
            queue,
            queue_family: qf,
            mem_props,
            bda: on(f12.buffer_device_address),
            timeout_s,
            lock: Mutex::new(()),
            lost: Default::default(),
            info,
        })
    }

    /// What the device offers.
    pub fn info(&self) -> &DeviceInfo {
        &self.info
    }

    /// Fails once an earlier job timed out (its work may still be running).
    pub(crate) fn check_alive(&self) -> Result<(), Error> {
        if self.lost.load(std::sync::atomic::Ordering::SeqCst) {
            return Err(Error::Job(
                "the device is unusable: an earlier job did not finish (hung shader)".into(),
            ));
        }
        Ok(())
    }

    /// An `Unsupported` error naming this device.
    pub(crate) fn unsupported(&self, reason: impl Into<String>) -> Error {
        Error::Unsupported {
            device: self.info.name.clone(),
            reason: reason.into(),
        }
    }

    /// Index of a memory type allowed by `bits` with all of `flags`.
    pub(crate) fn memory_type(&self, bits: u32, flags: vk::MemoryPropertyFlags) -> Option<u32> {
        (0..self.mem_props.memory_type_count).find(|&i| {
            bits & (1 << i) != 0
                && self.mem_props.memory_types[i as usize]
                    .property_flags
                    .contains(flags)
        })
    }
}

impl Drop for Device {
    fn drop(&mut self) {
        if self.lost.load(std::sync::atomic::Ordering::SeqCst) {
            return; // hung work may still use the device: leak it rather than hang or crash
        }
        // SAFETY: no job holds the device (jobs borrow it), so nothing is in flight.
        unsafe {
            let _ = self.device.device_wait_idle();
            self.device.destroy_device(None);
            self.instance.destroy_instance(None);
        }
    }
}

/// A host-visible, coherent buffer with its memory, mapped for its whole life.
pub(crate) struct HostBuffer {
    pub buffer: vk::Buffer,
    pub memory: vk::DeviceMemory,
    pub size: u64,
    pub ptr: *mut u8,
    pub address: u64,
}

/// Owns every Vulkan object a job creates and destroys them on drop, on success and error paths.
pub(crate) struct Scope<'d> {
    pub dev: &'d Device,
    pub buffers: Vec<HostBuffer>,
    pub images: Vec<(vk::Image, vk::DeviceMemory)>,
    pub views: Vec<vk::ImageView>,
    pub buffer_views: Vec<vk::BufferView>,
    pub samplers: Vec<vk::Sampler>,
    pub modules: Vec<vk::ShaderModule>,
    pub set_layouts: Vec<vk::DescriptorSetLayout>,
    pub pipeline_layouts: Vec<vk::PipelineLayout>,
    pub pipelines: Vec<vk::Pipeline>,
    pub pools: Vec<vk::DescriptorPool>,
    pub cmd_pools: std::cell::RefCell<Vec<vk::CommandPool>>,
    pub fences: std::cell::RefCell<Vec<vk::Fence>>,
    pub render_passes: Vec<vk::RenderPass>,
    pub framebuffers: Vec<vk::Framebuffer>,
    pub query_pools: Vec<vk::QueryPool>,
}

impl<'d> Scope<'d> {
    /// An empty scope on `dev`.
    pub fn new(dev: &'d Device) -> Self {
        Scope {
            dev,
            buffers: Vec::new(),
            images: Vec::new(),
            views: Vec::new(),
            buffer_views: Vec::new(),
            samplers: Vec::new(),
            modules: Vec::new(),
            set_layouts: Vec::new(),
            pipeline_layouts: Vec::new(),
            pipelines: Vec::new(),
            pools: Vec::new(),
            cmd_pools: Default::default(),
            fences: Default::default(),
            render_passes: Vec::new(),
            framebuffers: Vec::new(),
            query_pools: Vec::new(),
        }
    }

    /// Creates a mapped host-visible buffer of at least `size` bytes (rounded up to 16, at least
    /// 16), filled with `init` and zeros. Returns its index in `self.buffers`.
    pub fn buffer(
        &mut self,
        size: u64,
        init: &[u8],
        usage: vk::BufferUsageFlags,
    ) -> Result<usize, Error> {
        let d = &self.dev.device;
        let size = size.max(init.len() as u64).max(16).div_ceil(16) * 16;
        let mut usage =
            usage | vk::BufferUsageFlags::TRANSFER_SRC | vk::BufferUsageFlags::TRANSFER_DST;
        if self.dev.bda {
            usage |= vk::BufferUsageFlags::SHADER_DEVICE_ADDRESS;
        }
        // SAFETY: valid device; every handle is recorded in the scope before the next fallible call.
        unsafe {
            let buffer = d
                .create_buffer(
                    &vk::BufferCreateInfo::default()
                        .size(size)
                        .usage(usage)
                        .sharing_mode(vk::SharingMode::EXCLUSIVE),
                    None,
                )
                .vk("vkCreateBuffer")?;
            self.buffers.push(HostBuffer {
                buffer,
                memory: vk::DeviceMemory::null(),
                size,
                ptr: std::ptr::null_mut(),
                address: 0,
            });
            let req = d.get_buffer_memory_requirements(buffer);
            let ty = self
                .dev
                .memory_type(
                    req.memory_type_bits,
                    vk::MemoryPropertyFlags::HOST_VISIBLE | vk::MemoryPropertyFlags::HOST_COHERENT,
                )
                .ok_or_else(|| self.dev.unsupported("no host-visible coherent memory type"))?;
            let mut flags = vk::MemoryAllocateFlagsInfo::default()
                .flags(vk::MemoryAllocateFlags::DEVICE_ADDRESS);
            let mut ai = vk::MemoryAllocateInfo::default()
                .allocation_size(req.size)
                .memory_type_index(ty);
            if self.dev.bda {
                ai = ai.push_next(&mut flags);
            }
            let memory = d.allocate_memory(&ai, None).vk("vkAllocateMemory")?;
            let last = self.buffers.len() - 1;
            self.buffers[last].memory = memory;
            d.bind_buffer_memory(buffer, memory, 0)
                .vk("vkBindBufferMemory")?;
            let ptr = d
                .map_memory(memory, 0, vk::WHOLE_SIZE, vk::MemoryMapFlags::empty())
                .vk("vkMapMemory")? as *mut u8;
            std::ptr::write_bytes(ptr, 0, size as usize);
            std::ptr::copy_nonoverlapping(init.as_ptr(), ptr, init.len());
            self.buffers[last].ptr = ptr;
            if self.dev.bda {
                self.buffers[last].address = d.get_buffer_device_address(
                    &vk::BufferDeviceAddressInfo::default().buffer(buffer),
                );
            }
            Ok(last)
        }
    }

    /// Copies a buffer's current contents out (first `len` bytes).
    pub fn read(&self, i: usize, len: u64) -> Vec<u8> {
        let b = &self.buffers[i];
        let len = len.min(b.size) as usize;
        let mut v = vec![0u8; len];
        // SAFETY: ptr maps `size` bytes; the GPU finished (fence waited) before reads.
        unsafe { std::ptr::copy_nonoverlapping(b.ptr, v.as_mut_ptr(), len) };
        v
    }

    /// Writes bytes into a mapped buffer at `offset` (bounds checked by the caller).
    pub fn write(&self, i: usize, offset: u64, bytes: &[u8]) {
        let b = &self.buffers[i];
        debug_assert!(offset + bytes.len() as u64 <= b.size);
        // SAFETY: bounds checked by the caller; nothing in flight.
        unsafe {
            std::ptr::copy_nonoverlapping(bytes.as_ptr(), b.ptr.add(offset as usize), bytes.len())
        };
    }

    /// Creates a shader module from SPIR-V words.
    pub fn module(&mut self, words: &[u32]) -> Result<vk::ShaderModule, Error> {
        if words.first() != Some(&0x0723_0203) {
            return Err(Error::Job(
                "SPIR-V does not start with the magic number 0x07230203".into(),
            ));
        }
        // SAFETY: valid device and code pointer.
        let m = unsafe {
            self.dev
                .device
                .create_shader_module(&vk::ShaderModuleCreateInfo::default().code(words), None)
        }
        .vk("vkCreateShaderModule")?;
        self.modules.push(m);
        Ok(m)
    }

    /// Creates a pipeline layout of the descriptor set layouts `sets` (no push constants).
    pub fn pipeline_layout(
        &mut self,
        sets: &[vk::DescriptorSetLayout],
    ) -> Result<vk::PipelineLayout, Error> {
        // SAFETY: valid device; the set layouts come from this scope.
        let pl = unsafe {
            self.dev.device.create_pipeline_layout(
                &vk::PipelineLayoutCreateInfo::default().set_layouts(sets),
                None,
            )
        }
        .vk("vkCreatePipelineLayout")?;
        self.pipeline_layouts.push(pl);
        Ok(pl)
    }

    /// Records the pipeline a `vkCreate*Pipelines` call (`call`) made for one create info.
    pub fn pipeline(
        &mut self,
        call: &'static str,
        made: Result<Vec<vk::Pipeline>, (Vec<vk::Pipeline>, vk::Result)>,
    ) -> Result<vk::Pipeline, Error> {
        let p = made.map_err(|(_, result)| Error::Vk { call, result })?[0];
        self.pipelines.push(p);
        Ok(p)
    }

    /// Records commands with `f` into a fresh command buffer, submits, and waits for the fence.
    pub fn submit(&self, f: impl FnOnce(&ash::Device, vk::CommandBuffer)) -> Result<(), Error> {
        let d = &self.dev.device;
        // SAFETY: valid device; the queue is used under the device lock held by the caller.
        unsafe {
            let pool = d
                .create_command_pool(
                    &vk::CommandPoolCreateInfo::default().queue_family_index(self.dev.queue_family),
                    None,
                )
                .vk("vkCreateCommandPool")?;
            self.cmd_pools.borrow_mut().push(pool);
            let cb = d
                .allocate_command_buffers(
                    &vk::CommandBufferAllocateInfo::default()
                        .command_pool(pool)
                        .level(vk::CommandBufferLevel::PRIMARY)
                        .command_buffer_count(1),
                )
                .vk("vkAllocateCommandBuffers")?[0];
            d.begin_command_buffer(
                cb,
                &vk::CommandBufferBeginInfo::default()
                    .flags(vk::CommandBufferUsageFlags::ONE_TIME_SUBMIT),
            )
            .vk("vkBeginCommandBuffer")?;
            f(d, cb);
            d.end_command_buffer(cb).vk("vkEndCommandBuffer")?;
            let fence = d
                .create_fence(&vk::FenceCreateInfo::default(), None)
                .vk("vkCreateFence")?;
            self.fences.borrow_mut().push(fence);
            let cbs = [cb];
            d.queue_submit(
                self.dev.queue,
                &[vk::SubmitInfo::default().command_buffers(&cbs)],
                fence,
            )
            .vk("vkQueueSubmit")?;
            match d.wait_for_fences(&[fence], true, self.dev.timeout_s * 1_000_000_000) {
                Ok(()) => Ok(()),
                Err(vk::Result::TIMEOUT) => {
                    self.dev
                        .lost
                        .store(true, std::sync::atomic::Ordering::SeqCst);
                    Err(Error::Timeout(self.dev.timeout_s))
                }
                Err(e) => Err(Error::Vk {
                    call: "vkWaitForFences",
                    result: e,
                }),
            }
        }
    }
}

impl Drop for Scope<'_> {
    fn drop(&mut self) {
        if self.dev.lost.load(std::sync::atomic::Ordering::SeqCst) {
            return; // the timed-out work may still use these objects: leak them
        }
        let d = &self.dev.device;
        // SAFETY: all work was waited for (or the device is lost); handles are ours.
        unsafe {
            let _ = d.queue_wait_idle(self.dev.queue);
            for &f in self.fences.borrow().iter() {
                d.destroy_fence(f, None);
            }
            for &p in self.cmd_pools.borrow().iter() {
                d.destroy_command_pool(p, None);
            }
            for &p in &self.pipelines {
                d.destroy_pipeline(p, None);
            }
            for &q in &self.query_pools {
                d.destroy_query_pool(q, None);
            }
            for &f in &self.framebuffers {
                d.destroy_framebuffer(f, None);
            }
            for &r in &self.render_passes {
                d.destroy_render_pass(r, None);
            }
            for &p in &self.pipeline_layouts {
                d.destroy_pipeline_layout(p, None);
            }
            for &p in &self.pools {
                d.destroy_descriptor_pool(p, None);
            }
            for &l in &self.set_layouts {
                d.destroy_descriptor_set_layout(l, None);
            }
            for &m in &self.modules {
                d.destroy_shader_module(m, None);
            }
            for &s in &self.samplers {
                d.destroy_sampler(s, None);
            }
            for &v in &self.views {
                d.destroy_image_view(v, None);
            }
            for &v in &self.buffer_views {
                d.destroy_buffer_view(v, None);
            }
            for &(i, m) in &self.images {
                d.destroy_image(i, None);
                d.free_memory(m, None);
            }
            for b in &self.buffers {
                d.destroy_buffer(b.buffer, None);
                if b.memory != vk::DeviceMemory::null() {
                    d.free_memory(b.memory, None);
                }
            }
        }
    }
}
