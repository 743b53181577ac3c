//! dmsh-vk: runs translated SPIR-V on a Vulkan device (compute dispatch and
//! offscreen rendering) for `dmsh exec` / `dmsh render` and the tests.
