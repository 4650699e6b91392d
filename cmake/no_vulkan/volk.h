/* src/core/ must compile without Vulkan (src/CMakeLists.txt, vkattn_core_without_vulkan):
 * an include of core/ reached <volk.h>. */
#error "src/core/ reached a Vulkan header: include only Vulkan-free headers there"
