"""The C declarations the package uses, for cffi's ABI mode. GENERATED from
include/vkattn/*.h (and the build's vkattn/version.h) by scripts/gen-cdef.py:
do not edit; python/tests/test_cdef_drift.py fails when it is stale, and compares
cffi's sizeof, offsetof and enum values with the compiler's and compiles
FUNCTIONS next to the headers.
"""

ABI = (0, 4)  # the (major, minor) of the headers: the library's must match

TYPES = r"""
typedef struct VkInstance_T *VkInstance;
typedef struct VkPhysicalDevice_T *VkPhysicalDevice;
typedef struct VkDevice_T *VkDevice;
typedef struct VkQueue_T *VkQueue;
typedef struct VkCommandBuffer_T *VkCommandBuffer;
typedef struct VkPipelineCache_T *VkPipelineCache;
typedef struct VkDeviceMemory_T *VkDeviceMemory;
typedef struct VkBuffer_T *VkBuffer;
typedef uint64_t VkDeviceSize;
typedef uint32_t VkAccessFlags;
typedef uint32_t VkPipelineStageFlags;
typedef void (*PFN_vkVoidFunction)(void);
typedef PFN_vkVoidFunction (*PFN_vkGetInstanceProcAddr)(VkInstance instance, const char *pName);

/* ---- result.h */
typedef enum vkattn_result {
    VKATTN_SUCCESS = 0,
    VKATTN_ERROR_INVALID_ARGUMENT = -1,
    VKATTN_ERROR_OUT_OF_HOST_MEMORY = -2,
    VKATTN_ERROR_OUT_OF_DEVICE_MEMORY = -3,
    VKATTN_ERROR_NO_VULKAN = -4,
    VKATTN_ERROR_NO_DEVICE = -5,
    VKATTN_ERROR_UNSUPPORTED = -6,
    VKATTN_ERROR_SIZE_OVERFLOW = -7,
    VKATTN_ERROR_DEVICE_LIMIT = -8,
    VKATTN_ERROR_VULKAN = -9,
    VKATTN_ERROR_DEVICE_LOST = -10,
    VKATTN_ERROR_NOT_READY = -11,
} vkattn_result;

typedef enum vkattn_log_level {
    VKATTN_LOG_ERROR = 0,
    VKATTN_LOG_WARN = 1,
    VKATTN_LOG_INFO = 2,
    VKATTN_LOG_DEBUG = 3,
} vkattn_log_level;

typedef enum vkattn_log_source {
    VKATTN_LOG_SOURCE_LIBRARY = 0,
    VKATTN_LOG_SOURCE_VALIDATION = 1,
} vkattn_log_source;

typedef void (*vkattn_log_fn)(void *user, vkattn_log_level level, vkattn_log_source source,
                              const char *message);

/* ---- context.h */
typedef struct vkattn_context vkattn_context;

typedef struct vkattn_import_desc {
    VkInstance instance;
    VkPhysicalDevice physical_device;
    VkDevice device;
    VkQueue queue;
    uint32_t queue_family_index;
    uint32_t api_version;
    PFN_vkGetInstanceProcAddr get_instance_proc_addr;
    const char *const *enabled_extensions;
    uint32_t enabled_extension_count;
    uint32_t queue_index;
    void (*lock_queue)(void *user, uint32_t queue_family_index, uint32_t queue_index);
    void (*unlock_queue)(void *user, uint32_t queue_family_index, uint32_t queue_index);
    void *queue_lock_user;
} vkattn_import_desc;

struct vkattn_context_advanced;

typedef struct vkattn_allocation_request {
    VkDevice device;
    VkDeviceSize size;
    VkDeviceSize alignment;
    uint32_t memory_type_bits;
    uint32_t memory_type_index;
    bool host_visible;
} vkattn_allocation_request;

typedef struct vkattn_allocation {
    VkDeviceMemory memory;
    VkDeviceSize offset;
    void *mapped;
    void *user_data;
} vkattn_allocation;

typedef struct vkattn_allocator {
    void *user;
    vkattn_result (*allocate)(void *user, const vkattn_allocation_request *req,
                              vkattn_allocation *out);
    void (*free)(void *user, const vkattn_allocation *a);
} vkattn_allocator;

typedef struct vkattn_context_desc {
    bool use_device_index;
    uint32_t device_index;
    const char *device_name;
    bool enable_validation;
    vkattn_import_desc import;
    vkattn_log_fn log;
    void *log_user;
    vkattn_log_level log_level;
    VkPipelineCache pipeline_cache;
    const char *profile;
    uint64_t max_dispatch_work;
    const void *pipeline_cache_data;
    size_t pipeline_cache_size;
    const struct vkattn_context_advanced *advanced;
    vkattn_allocator allocator;
} vkattn_context_desc;

typedef enum vkattn_device_type {
    VKATTN_DEVICE_OTHER = 0,
    VKATTN_DEVICE_INTEGRATED = 1,
    VKATTN_DEVICE_DISCRETE = 2,
    VKATTN_DEVICE_VIRTUAL = 3,
    VKATTN_DEVICE_CPU = 4,
} vkattn_device_type;

typedef enum vkattn_coopmat_check_state {
    VKATTN_COOPMAT_NOT_TRIED = 0,
    VKATTN_COOPMAT_PASSED = 1,
    VKATTN_COOPMAT_FAILED = 2,
    VKATTN_COOPMAT_FORCED = 3,
} vkattn_coopmat_check_state;

typedef struct vkattn_coopmat_check {
    vkattn_coopmat_check_state state;
    char detail[96];
    uint64_t index;
    float got, expected;
    bool cached;
} vkattn_coopmat_check;

typedef struct vkattn_context_info {
    char device_name[256];
    uint32_t vendor_id;
    uint32_t device_id;
    vkattn_device_type device_type;
    uint32_t api_version;
    uint32_t driver_version;
    uint32_t subgroup_size;
    uint32_t min_subgroup_size, max_subgroup_size;
    uint32_t max_shared_memory;
    uint32_t max_workgroup_size[3];
    uint32_t max_workgroup_invocations;
    uint32_t max_workgroup_count[3];
    uint64_t max_storage_buffer_range;
    uint32_t min_storage_buffer_offset_alignment;
    bool fp16;
    bool timestamps;
    float timestamp_period_ns;
    bool unified_memory;
    bool imported;
    bool validation;
    bool cpu_tuning;
    char profile[32];
    uint32_t max_storage_buffers_per_stage;
    bool push_descriptors;
    bool storage_buffer_16bit;
    bool subgroup_operations;
    bool portability_subset;
    uint64_t max_dispatch_work;
    uint32_t coopmat_flavours;
    bool coopmat_f16_16x16x16;
    bool coopmat_enabled;
    bool coopmat_attention;
    uint32_t coopmat_built;
    uint32_t coopmat_running;
    vkattn_coopmat_check coopmat_check[4];
} vkattn_context_info;

typedef struct vkattn_memory_stats {
    uint64_t device_allocations;
    uint64_t device_bytes;
    uint64_t dedicated_allocations;
    uint64_t used_bytes;
    uint64_t peak_used_bytes;
    uint64_t buffers;
    uint64_t app_allocations;
} vkattn_memory_stats;

typedef struct vkattn_optional_extension {
    const char *name;
    const char *benefit;
} vkattn_optional_extension;

typedef struct vkattn_device_info {
    uint32_t index;
    char name[256];
    uint32_t vendor_id;
    vkattn_device_type device_type;
    uint32_t api_version;
    bool usable;
} vkattn_device_info;

typedef struct vkattn_context_stats {
    uint64_t pipelines_created;
    uint64_t scratch_allocations;
    uint64_t descriptor_sets_allocated;
} vkattn_context_stats;

/* ---- op_params.h */
typedef struct vkattn_matrix_layout {
    uint64_t batch_stride;
    uint64_t head_stride;
    uint32_t row_stride;
} vkattn_matrix_layout;

typedef struct vkattn_matmul_params {
    uint32_t batch;
    uint32_t heads;
    uint32_t m, n, k;
    bool transpose_a;
    bool transpose_b;
    bool has_bias;
    float alpha;
    vkattn_matrix_layout a, b, c;
} vkattn_matmul_params;

typedef enum vkattn_causal {
    VKATTN_CAUSAL_NONE = 0,
    VKATTN_CAUSAL_TOP_LEFT = 1,
    VKATTN_CAUSAL_BOTTOM_RIGHT = 2,
} vkattn_causal;

typedef enum vkattn_masked_row {
    VKATTN_MASKED_ROW_ZERO = 0,
    VKATTN_MASKED_ROW_UNIFORM = 1,
} vkattn_masked_row;

typedef struct vkattn_broadcast {
    bool batch;
    bool heads;
    bool rows;
} vkattn_broadcast;

typedef struct vkattn_mask_params {
    vkattn_causal causal;
    vkattn_masked_row masked_row;
    bool has_value_mask;
    bool has_mask;
    vkattn_broadcast mask_broadcast;
    bool has_bias;
    vkattn_broadcast bias_broadcast;
} vkattn_mask_params;

typedef struct vkattn_dropout_params {
    float rate;
    bool training;
    uint64_t seed;
    uint64_t offset;
} vkattn_dropout_params;

typedef struct vkattn_softmax_params {
    uint32_t batch, heads, tq, tv;
    float scale;
    vkattn_mask_params mask;
    uint32_t sliding_window;
} vkattn_softmax_params;

typedef struct vkattn_additive_params {
    uint32_t batch, tq, tv, dim;
    float inner_scale;
    float outer_scale;
    bool has_scale_vector;
} vkattn_additive_params;

typedef struct vkattn_heads_params {
    uint32_t batch, seq, heads, head_dim;
} vkattn_heads_params;

typedef struct vkattn_dropout_op_params {
    uint32_t batch, heads, tq, tv;
    vkattn_dropout_params dropout;
} vkattn_dropout_op_params;

typedef enum vkattn_sdpa_path {
    VKATTN_SDPA_AUTO = 0,
    VKATTN_SDPA_FUSED = 1,
    VKATTN_SDPA_UNFUSED = 2,
} vkattn_sdpa_path;

typedef struct vkattn_sdpa_params {
    uint32_t batch, heads, tq, tv, dk, dv;
    uint32_t kv_heads;
    float scale;
    vkattn_mask_params mask;
    vkattn_dropout_params dropout;
    bool return_weights;
    bool weights_after_dropout;
    vkattn_sdpa_path path;
    uint32_t sliding_window;
    float softcap;
    bool has_sinks;
} vkattn_sdpa_params;

typedef struct vkattn_sdpa_decode_params {
    uint32_t batch, heads, tq;
    uint32_t kv_heads;
    uint32_t capacity, dk, dv;
    float scale;
    bool has_value_mask;
    vkattn_dropout_params dropout;
    uint32_t sliding_window;
    uint32_t num_splits;
    float softcap;
    bool has_sinks;
} vkattn_sdpa_decode_params;

typedef enum vkattn_rope_layout {
    VKATTN_ROPE_HALF = 0,
    VKATTN_ROPE_INTERLEAVED = 1,
} vkattn_rope_layout;

typedef struct vkattn_rope_params {
    float max_wavelength;
    float scaling_factor;
    uint32_t rotary_dim;
    vkattn_rope_layout layout;
} vkattn_rope_params;

typedef enum vkattn_head_op {
    VKATTN_HEAD_RMS_NORM = 1,
    VKATTN_HEAD_RMS_NORM_BACKWARD = 2,
    VKATTN_HEAD_ROPE = 3,
    VKATTN_HEAD_ROPE_INVERSE = 4,
} vkattn_head_op;

typedef struct vkattn_head_op_params {
    vkattn_head_op op;
    uint32_t batch, heads, seq, dim;
    float epsilon;
    vkattn_rope_params rope;
} vkattn_head_op_params;

/* ---- dtype.h */
typedef enum vkattn_dtype {
    VKATTN_DTYPE_F32 = 0,
    VKATTN_DTYPE_F16 = 1,
    VKATTN_DTYPE_I8 = 2,
    VKATTN_DTYPE_BF16 = 3,
} vkattn_dtype;

/* ---- tensor.h */
typedef struct vkattn_tensor vkattn_tensor;

typedef struct vkattn_buffer_view {
    VkBuffer buffer;
    VkDeviceSize offset;
    VkDeviceSize size;
} vkattn_buffer_view;

typedef struct vkattn_tensor_desc {
    uint32_t rank;
    uint32_t dims[4];
    vkattn_dtype dtype;
} vkattn_tensor_desc;

typedef struct vkattn_tensor_info {
    vkattn_tensor_desc desc;
    uint64_t count;
    vkattn_buffer_view buffer;
} vkattn_tensor_info;

/* ---- additive.h */
typedef struct vkattn_additive_io {
    vkattn_tensor *q;
    vkattn_tensor *k;
    vkattn_tensor *scale;
    vkattn_tensor *scores;
} vkattn_additive_io;

/* ---- layer_call.h */
typedef enum vkattn_initializer {
    VKATTN_INIT_DEFAULT = 0,
    VKATTN_INIT_GLOROT_UNIFORM = 1,
    VKATTN_INIT_GLOROT_NORMAL = 2,
    VKATTN_INIT_HE_UNIFORM = 3,
    VKATTN_INIT_HE_NORMAL = 4,
    VKATTN_INIT_LECUN_UNIFORM = 5,
    VKATTN_INIT_LECUN_NORMAL = 6,
    VKATTN_INIT_ZEROS = 7,
    VKATTN_INIT_ONES = 8,
} vkattn_initializer;

typedef struct vkattn_layer_call {
    uint32_t batch;
    uint32_t tq;
    uint32_t tv;
    vkattn_causal causal;
    bool training;
    uint64_t seed, offset;
    bool return_attention_scores;
    vkattn_sdpa_path path;
    bool keep_for_backward;
} vkattn_layer_call;

typedef struct vkattn_layer_host_io {
    const float *query, *value, *key, *query_mask, *value_mask, *attention_mask;
    bool attention_mask_per_head;
    float *output, *scores;
    uint32_t attention_mask_rank;
    uint32_t attention_mask_dims[4];
    const float *query_positions, *key_positions;
} vkattn_layer_host_io;

typedef struct vkattn_layer_host_grads {
    float *grad_query, *grad_value, *grad_key;
} vkattn_layer_host_grads;

/* ---- safetensors.h */
typedef struct vkattn_weights_file vkattn_weights_file;

typedef enum vkattn_weights_dtype {
    VKATTN_WEIGHTS_DTYPE_F32 = 0,
    VKATTN_WEIGHTS_DTYPE_F16 = 1,
    VKATTN_WEIGHTS_DTYPE_BF16 = 2,
    VKATTN_WEIGHTS_DTYPE_OTHER = 3,
} vkattn_weights_dtype;

typedef struct vkattn_weights_tensor_info {
    const char *name;
    const char *dtype_name;
    vkattn_weights_dtype dtype;
    uint32_t rank;
    uint64_t dims[8];
    uint64_t count;
    uint64_t data_begin, data_end;
} vkattn_weights_tensor_info;

typedef struct vkattn_weights_tensor {
    const char *name;
    uint32_t rank;
    uint64_t dims[8];
    const float *data;
} vkattn_weights_tensor;

typedef enum vkattn_weights_names {
    VKATTN_WEIGHTS_NAMES_KERAS = 0,
    VKATTN_WEIGHTS_NAMES_TORCH = 1,
    VKATTN_WEIGHTS_NAMES_LLAMA = 2,
} vkattn_weights_names;

typedef struct vkattn_weights_load_desc {
    vkattn_weights_names names;
    const char *prefix;
} vkattn_weights_load_desc;

/* ---- additive_attention_host.h */
typedef struct vkattn_additive_attention_desc {
    uint32_t query_width, value_width;
    uint32_t key_width;
    bool no_scale;
    float dropout;
    vkattn_dtype dtype;
    vkattn_initializer scale_initializer;
    uint64_t initializer_seed;
} vkattn_additive_attention_desc;

typedef struct vkattn_additive_attention_weights {
    float *scale;
} vkattn_additive_attention_weights;

/* ---- layer_common.h */
typedef struct vkattn_layer_io {
    vkattn_tensor *query;
    vkattn_tensor *value;
    vkattn_tensor *key;
    vkattn_tensor *query_mask;
    vkattn_tensor *value_mask;
    vkattn_tensor *attention_mask;
    bool attention_mask_per_head;
    vkattn_tensor *output;
    vkattn_tensor *scores;
    vkattn_tensor *query_positions, *key_positions;
} vkattn_layer_io;

typedef struct vkattn_layer_grads {
    vkattn_tensor *grad_output;
    vkattn_tensor *grad_query;
    vkattn_tensor *grad_value;
    vkattn_tensor *grad_key;
} vkattn_layer_grads;

/* ---- additive_attention.h */
typedef struct vkattn_additive_attention vkattn_additive_attention;

typedef struct vkattn_additive_attention_weight_tensors {
    vkattn_tensor *scale;
} vkattn_additive_attention_weight_tensors;

/* ---- additive_backward.h */
typedef struct vkattn_additive_backward_io {
    vkattn_tensor *q;
    vkattn_tensor *k;
    vkattn_tensor *scale;
    vkattn_tensor *grad_scores;
    vkattn_tensor *grad_q;
    vkattn_tensor *grad_k;
    vkattn_tensor *grad_scale;
} vkattn_additive_backward_io;

/* ---- attention_host.h */
typedef enum vkattn_score_mode {
    VKATTN_SCORE_DOT = 0,
    VKATTN_SCORE_CONCAT = 1,
} vkattn_score_mode;

typedef struct vkattn_attention_desc {
    uint32_t query_width, value_width;
    uint32_t key_width;
    bool use_scale;
    vkattn_score_mode score_mode;
    float dropout;
    vkattn_dtype dtype;
} vkattn_attention_desc;

typedef struct vkattn_attention_weights {
    float scale;
    float concat_score_weight;
} vkattn_attention_weights;

/* ---- attention.h */
typedef struct vkattn_attention vkattn_attention;

typedef struct vkattn_attention_weight_tensors {
    vkattn_tensor *scale, *concat_score_weight;
} vkattn_attention_weight_tensors;

/* ---- bahdanau_host.h */
typedef struct vkattn_bahdanau_desc {
    uint32_t query_width;
    uint32_t key_width;
    uint32_t value_width;
    uint32_t units;
    float dropout;
    vkattn_dtype dtype;
    vkattn_initializer kernel_initializer;
    vkattn_initializer bias_initializer;
    uint64_t initializer_seed;
} vkattn_bahdanau_desc;

typedef struct vkattn_bahdanau_weights {
    float *query_kernel, *key_kernel, *score_kernel;
    float score_bias;
} vkattn_bahdanau_weights;

/* ---- bahdanau.h */
typedef struct vkattn_bahdanau vkattn_bahdanau;

typedef struct vkattn_bahdanau_weight_tensors {
    vkattn_tensor *query_kernel, *key_kernel, *score_kernel, *score_bias;
} vkattn_bahdanau_weight_tensors;

/* ---- kv_cache.h */
typedef struct vkattn_kv_cache vkattn_kv_cache;

typedef struct vkattn_kv_cache_desc {
    uint32_t batch;
    uint32_t kv_heads;
    uint32_t capacity;
    uint32_t key_dim;
    uint32_t value_dim;
    vkattn_tensor *keys, *values;
    vkattn_dtype dtype;
} vkattn_kv_cache_desc;

typedef struct vkattn_kv_append_io {
    vkattn_tensor *k, *v;
    vkattn_tensor *counts;
} vkattn_kv_append_io;

/* ---- decode.h */
typedef struct vkattn_sdpa_decode_io {
    vkattn_tensor *q;
    vkattn_kv_cache *cache;
    vkattn_tensor *value_mask;
    vkattn_tensor *out;
    vkattn_tensor *sinks;
} vkattn_sdpa_decode_io;

/* ---- dropout.h */
typedef struct vkattn_dropout_io {
    vkattn_tensor *in;
    vkattn_tensor *out;
} vkattn_dropout_io;

typedef struct vkattn_dropout_backward_io {
    vkattn_tensor *grad_out;
    vkattn_tensor *grad_in;
} vkattn_dropout_backward_io;

/* ---- mha_host.h */
typedef struct vkattn_mha_desc {
    uint32_t num_heads;
    uint32_t key_dim;
    uint32_t value_dim;
    uint32_t query_width;
    uint32_t key_width;
    uint32_t value_width;
    uint32_t output_dim;
    bool no_bias;
    float dropout;
    vkattn_dtype dtype;
    uint32_t sliding_window;
    bool use_gate;
    vkattn_initializer kernel_initializer;
    vkattn_initializer bias_initializer;
    uint64_t initializer_seed;
    bool use_qk_norm;
    float qk_norm_epsilon;
    bool use_rope;
    vkattn_rope_params rope;
    float softcap;
    bool use_sinks;
} vkattn_mha_desc;

typedef struct vkattn_mha_weights {
    float *query_kernel, *query_bias;
    float *key_kernel, *key_bias;
    float *value_kernel, *value_bias;
    float *output_kernel, *output_bias;
    float *gate_kernel, *gate_bias;
    float *query_norm, *key_norm, *sinks;
} vkattn_mha_weights;

/* ---- gqa_host.h */
typedef struct vkattn_gqa_desc {
    uint32_t head_dim;
    uint32_t num_query_heads;
    uint32_t num_key_value_heads;
    uint32_t query_width;
    uint32_t key_width;
    uint32_t value_width;
    bool no_bias;
    float dropout;
    vkattn_dtype dtype;
    int32_t sliding_window;
    bool use_gate;
    vkattn_initializer kernel_initializer;
    vkattn_initializer bias_initializer;
    uint64_t initializer_seed;
    bool use_qk_norm;
    float qk_norm_epsilon;
    bool use_rope;
    vkattn_rope_params rope;
    float softcap;
    bool use_sinks;
} vkattn_gqa_desc;

typedef vkattn_mha_weights vkattn_gqa_weights;

/* ---- mha.h */
typedef struct vkattn_mha vkattn_mha;

typedef struct vkattn_mha_weight_tensors {
    vkattn_tensor *query_kernel, *query_bias;
    vkattn_tensor *key_kernel, *key_bias;
    vkattn_tensor *value_kernel, *value_bias;
    vkattn_tensor *output_kernel, *output_bias;
    vkattn_tensor *gate_kernel, *gate_bias;
    vkattn_tensor *query_norm, *key_norm, *sinks;
} vkattn_mha_weight_tensors;

/* ---- gqa.h */
typedef struct vkattn_gqa vkattn_gqa;

typedef vkattn_mha_weight_tensors vkattn_gqa_weight_tensors;

/* ---- head_op.h */
typedef struct vkattn_head_op_io {
    vkattn_tensor *x;
    vkattn_tensor *out;
    vkattn_tensor *weight;
    vkattn_tensor *positions;
    vkattn_tensor *grad_out;
    vkattn_tensor *grad_x;
    vkattn_tensor *grad_weight;
} vkattn_head_op_io;

/* ---- heads.h */
typedef struct vkattn_heads_io {
    vkattn_tensor *in;
    vkattn_tensor *out;
} vkattn_heads_io;

typedef struct vkattn_heads_backward_io {
    vkattn_tensor *grad_out;
    vkattn_tensor *grad_in;
} vkattn_heads_backward_io;

/* ---- train_params.h */
typedef enum vkattn_optim_algorithm {
    VKATTN_OPTIM_SGD = 0,
    VKATTN_OPTIM_ADAM,
    VKATTN_OPTIM_ADAMW,
} vkattn_optim_algorithm;

typedef struct vkattn_optim_params {
    vkattn_optim_algorithm algorithm;
    float lr;
    float weight_decay;
    float momentum;
    float dampening;
    bool nesterov;
    float beta1, beta2;
    float eps;
} vkattn_optim_params;

typedef struct vkattn_mse_params {
    uint32_t count;
    float loss_scale;
} vkattn_mse_params;

/* ---- loss.h */
typedef struct vkattn_mse_io {
    vkattn_tensor *pred;
    vkattn_tensor *target;
    vkattn_tensor *loss;
    vkattn_tensor *grad;
} vkattn_mse_io;

/* ---- matmul.h */
typedef struct vkattn_matmul_io {
    vkattn_tensor *a;
    vkattn_tensor *b;
    vkattn_tensor *bias;
    vkattn_tensor *c;
} vkattn_matmul_io;

/* ---- matmul_backward.h */
typedef struct vkattn_matmul_backward_io {
    vkattn_tensor *a;
    vkattn_tensor *b;
    vkattn_tensor *grad_c;
    vkattn_tensor *grad_a;
    vkattn_tensor *grad_b;
    vkattn_tensor *grad_bias;
} vkattn_matmul_backward_io;

/* ---- optim.h */
typedef struct vkattn_optim_io {
    uint32_t count;
    vkattn_tensor *param;
    vkattn_tensor *grad;
    vkattn_tensor *state;
    vkattn_tensor *step;
} vkattn_optim_io;

/* ---- reference.h */
typedef struct vkattn_matmul_dtypes {
    vkattn_dtype a, b, bias, c;
} vkattn_matmul_dtypes;

typedef struct vkattn_softmax_dtypes {
    vkattn_dtype scores, bias, out;
} vkattn_softmax_dtypes;

typedef struct vkattn_additive_dtypes {
    vkattn_dtype q, k, scale, scores;
} vkattn_additive_dtypes;

typedef struct vkattn_io_dtypes {
    vkattn_dtype in, out;
} vkattn_io_dtypes;

typedef struct vkattn_sdpa_dtypes {
    vkattn_dtype q, k, v, out;
} vkattn_sdpa_dtypes;

typedef struct vkattn_head_op_host_io {
    const float *x;
    float *out;
    const float *weight;
    const float *positions;
    const float *grad_out;
    float *grad_x;
    float *grad_weight;
} vkattn_head_op_host_io;

/* ---- sdpa.h */
typedef struct vkattn_sdpa_io {
    vkattn_tensor *q, *k, *v;
    vkattn_tensor *bias, *value_mask, *mask;
    vkattn_tensor *out;
    vkattn_tensor *weights;
    vkattn_tensor *workspace;
    vkattn_tensor *lse;
    vkattn_tensor *sinks;
} vkattn_sdpa_io;

/* ---- sdpa_backward.h */
typedef struct vkattn_sdpa_backward_io {
    vkattn_tensor *q, *k, *v;
    vkattn_tensor *bias, *value_mask, *mask;
    vkattn_tensor *out;
    vkattn_tensor *lse;
    vkattn_tensor *weights;
    vkattn_tensor *grad_out;
    vkattn_tensor *grad_q;
    vkattn_tensor *grad_k;
    vkattn_tensor *grad_v;
    vkattn_tensor *workspace[2];
    vkattn_tensor *sinks, *grad_sinks;
} vkattn_sdpa_backward_io;

/* ---- slicer.h */
typedef struct vkattn_slicer vkattn_slicer;

struct vkattn_peak_result;

typedef vkattn_result (*vkattn_record_fn)(void *user, VkCommandBuffer cmd);

typedef struct vkattn_slicer_desc {
    vkattn_record_fn record;
    void *user;
    double budget_us;
    const struct vkattn_peak_result *peak;
    bool no_timestamps;
    uint64_t max_piece_work;
} vkattn_slicer_desc;

typedef struct vkattn_slicer_info {
    uint32_t pieces;
    uint32_t next_piece;
    uint32_t slices;
    uint32_t measured_pieces;
    double budget_us;
    double estimated_us;
    bool timestamps;
    uint32_t resplits;
    uint32_t resplit_pieces;
    uint32_t uncut_pieces;
} vkattn_slicer_info;

typedef struct vkattn_slicer_piece {
    double estimated_us;
    double prior_us;
    double measured_us;
    uint64_t bytes;
    uint32_t slice;
    bool dispatch;
    bool uncut;
} vkattn_slicer_piece;

/* ---- softmax.h */
typedef struct vkattn_softmax_io {
    vkattn_tensor *scores;
    vkattn_tensor *bias;
    vkattn_tensor *value_mask;
    vkattn_tensor *mask;
    vkattn_tensor *out;
} vkattn_softmax_io;

/* ---- softmax_backward.h */
typedef struct vkattn_softmax_backward_io {
    vkattn_tensor *weights;
    vkattn_tensor *grad_out;
    vkattn_tensor *bias;
    vkattn_tensor *value_mask;
    vkattn_tensor *mask;
    vkattn_tensor *grad_scores;
} vkattn_softmax_backward_io;

/* ---- timer.h */
typedef struct vkattn_timer vkattn_timer;
"""

FUNCTIONS = r"""
/* ---- result.h */
const char *vkattn_result_name(vkattn_result result);
const char *vkattn_result_message(vkattn_result result);
const char *vkattn_last_error(void);

/* ---- version.h */
uint32_t vkattn_get_version(void);

/* ---- context.h */
vkattn_result vkattn_context_create_abi_0_4(const vkattn_context_desc *desc,
                                               vkattn_context **out);
void vkattn_context_destroy(vkattn_context *ctx);
const char *vkattn_context_last_error(const vkattn_context *ctx);
vkattn_result vkattn_context_get_info(const vkattn_context *ctx,
                                                 vkattn_context_info *info);
vkattn_result vkattn_context_memory_usage(const vkattn_context *ctx,
                                                     uint64_t *current, uint64_t *peak);
void vkattn_context_reset_peak_memory(vkattn_context *ctx);
vkattn_result vkattn_context_memory_stats(const vkattn_context *ctx,
                                                     vkattn_memory_stats *stats);
const char *const *vkattn_required_device_extensions(uint32_t *count);
const vkattn_optional_extension *vkattn_optional_device_extensions(uint32_t *count);
const char *const *vkattn_profile_names(uint32_t *count);
vkattn_result vkattn_enumerate_devices(vkattn_device_info *devices, uint32_t *count);
vkattn_result vkattn_context_get_pipeline_cache_data(vkattn_context *ctx, void *data,
                                                                size_t *size);
vkattn_result vkattn_context_get_stats(const vkattn_context *ctx,
                                                  vkattn_context_stats *stats);
vkattn_result vkattn_context_begin_commands(vkattn_context *ctx,
                                                       VkCommandBuffer *cmd);
vkattn_result vkattn_context_submit_and_wait(vkattn_context *ctx,
                                                        VkCommandBuffer cmd);

/* ---- tensor.h */
vkattn_result vkattn_tensor_create(vkattn_context *ctx, const vkattn_tensor_desc *desc,
                                              vkattn_tensor **out);
vkattn_result vkattn_tensor_wrap(vkattn_context *ctx, const vkattn_tensor_desc *desc,
                                            const vkattn_buffer_view *view, vkattn_tensor **out);
void vkattn_tensor_destroy(vkattn_tensor *t);
vkattn_result vkattn_tensor_upload(vkattn_tensor *t, const float *data, uint64_t first,
                                              uint64_t count);
vkattn_result vkattn_tensor_download(vkattn_tensor *t, float *data, uint64_t first,
                                                uint64_t count);
vkattn_result vkattn_tensor_upload_raw(vkattn_tensor *t, const void *data,
                                                  uint64_t first, uint64_t count);
vkattn_result vkattn_tensor_download_raw(vkattn_tensor *t, void *data, uint64_t first,
                                                    uint64_t count);
vkattn_result vkattn_tensor_fill(vkattn_tensor *t, float value);
vkattn_result vkattn_tensor_release(vkattn_tensor *t, VkCommandBuffer cmd,
                                               VkPipelineStageFlags dst_stage,
                                               VkAccessFlags dst_access, uint32_t dst_family);
vkattn_result vkattn_tensor_acquire(vkattn_tensor *t, VkCommandBuffer cmd,
                                               VkPipelineStageFlags src_stage,
                                               VkAccessFlags src_access, uint32_t src_family);
vkattn_tensor_info vkattn_tensor_get_info(const vkattn_tensor *t);

/* ---- additive.h */
vkattn_result vkattn_additive_record(vkattn_context *ctx, VkCommandBuffer cmd,
                                                const vkattn_additive_params *params,
                                                const vkattn_additive_io *io);

/* ---- safetensors.h */
vkattn_result vkattn_weights_file_open(const char *path, vkattn_weights_file **out);
vkattn_result vkattn_weights_file_open_memory(const void *data, size_t size,
                                                         const char *label,
                                                         vkattn_weights_file **out);
void vkattn_weights_file_close(vkattn_weights_file *file);
uint32_t vkattn_weights_file_count(const vkattn_weights_file *file);
vkattn_result vkattn_weights_file_tensor(const vkattn_weights_file *file,
                                                    uint32_t index,
                                                    vkattn_weights_tensor_info *info);
vkattn_result vkattn_weights_file_find(const vkattn_weights_file *file,
                                                  const char *name,
                                                  vkattn_weights_tensor_info *info);
const char *vkattn_weights_file_metadata(const vkattn_weights_file *file,
                                                    const char *key);
vkattn_result vkattn_weights_file_read(vkattn_weights_file *file, const char *name,
                                                  float *dst, uint64_t count);
vkattn_result vkattn_weights_save(const char *path, const vkattn_weights_tensor *tensors,
                                             uint32_t count, const char *const *metadata_keys,
                                             const char *const *metadata_values,
                                             uint32_t metadata_count);

/* ---- additive_attention_host.h */
vkattn_result vkattn_reference_additive_attention(
    const vkattn_additive_attention_desc *desc, const vkattn_additive_attention_weights *w,
    const vkattn_layer_call *call, const vkattn_layer_host_io *io);
vkattn_result vkattn_reference_additive_attention_backward(
    const vkattn_additive_attention_desc *desc, const vkattn_additive_attention_weights *w,
    const vkattn_layer_call *call, const vkattn_layer_host_io *io, const float *grad_output,
    const vkattn_layer_host_grads *grads, vkattn_additive_attention_weights *grad_w);
vkattn_result vkattn_additive_attention_weights_load(
    vkattn_weights_file *file, const vkattn_additive_attention_desc *desc,
    const vkattn_weights_load_desc *load, vkattn_additive_attention_weights *out);
void vkattn_additive_attention_weights_free(vkattn_additive_attention_weights *w);
vkattn_result vkattn_additive_attention_weights_save(
    const char *path, const vkattn_additive_attention_desc *desc,
    const vkattn_additive_attention_weights *w, const char *prefix);

/* ---- additive_attention.h */
vkattn_result vkattn_additive_attention_create(
    vkattn_context *ctx, const vkattn_additive_attention_desc *desc,
    vkattn_additive_attention **out);
void vkattn_additive_attention_destroy(vkattn_additive_attention *layer);
vkattn_result vkattn_additive_attention_set_weights(
    vkattn_additive_attention *layer, const vkattn_additive_attention_weights *w);
vkattn_result vkattn_additive_attention_get_weights(
    const vkattn_additive_attention *layer, vkattn_additive_attention_weights *w);
vkattn_result vkattn_additive_attention_record(vkattn_additive_attention *layer,
                                                          VkCommandBuffer cmd,
                                                          const vkattn_layer_call *call,
                                                          const vkattn_layer_io *io);
vkattn_result vkattn_additive_attention_get_weight_tensors(
    vkattn_additive_attention *layer, vkattn_additive_attention_weight_tensors *out);
vkattn_result vkattn_additive_attention_backward_record(
    vkattn_additive_attention *layer, VkCommandBuffer cmd, const vkattn_layer_call *call,
    const vkattn_layer_io *io, const vkattn_layer_grads *grads,
    const vkattn_additive_attention_weight_tensors *grad_w);

/* ---- additive_backward.h */
vkattn_result vkattn_additive_backward_record(vkattn_context *ctx, VkCommandBuffer cmd,
                                                         const vkattn_additive_params *params,
                                                         const vkattn_additive_backward_io *io);

/* ---- attention_host.h */
vkattn_result vkattn_reference_attention(const vkattn_attention_desc *desc,
                                                    const vkattn_attention_weights *w,
                                                    const vkattn_layer_call *call,
                                                    const vkattn_layer_host_io *io);
vkattn_result vkattn_reference_attention_backward(
    const vkattn_attention_desc *desc, const vkattn_attention_weights *w,
    const vkattn_layer_call *call, const vkattn_layer_host_io *io, const float *grad_output,
    const vkattn_layer_host_grads *grads, vkattn_attention_weights *grad_w);
vkattn_result vkattn_attention_weights_load(vkattn_weights_file *file,
                                                       const vkattn_attention_desc *desc,
                                                       const vkattn_weights_load_desc *load,
                                                       vkattn_attention_weights *out);
vkattn_result vkattn_attention_weights_save(const char *path,
                                                       const vkattn_attention_desc *desc,
                                                       const vkattn_attention_weights *w,
                                                       const char *prefix);

/* ---- attention.h */
vkattn_result vkattn_attention_create(vkattn_context *ctx,
                                                 const vkattn_attention_desc *desc,
                                                 vkattn_attention **out);
void vkattn_attention_destroy(vkattn_attention *layer);
vkattn_result vkattn_attention_set_weights(vkattn_attention *layer,
                                                      const vkattn_attention_weights *w);
vkattn_result vkattn_attention_get_weights(const vkattn_attention *layer,
                                                      vkattn_attention_weights *w);
vkattn_result vkattn_attention_record(vkattn_attention *layer, VkCommandBuffer cmd,
                                                 const vkattn_layer_call *call,
                                                 const vkattn_layer_io *io);
vkattn_result vkattn_attention_get_weight_tensors(
    vkattn_attention *layer, vkattn_attention_weight_tensors *out);
vkattn_result vkattn_attention_backward_record(
    vkattn_attention *layer, VkCommandBuffer cmd, const vkattn_layer_call *call,
    const vkattn_layer_io *io, const vkattn_layer_grads *grads,
    const vkattn_attention_weight_tensors *grad_w);

/* ---- bahdanau_host.h */
vkattn_result vkattn_reference_bahdanau(const vkattn_bahdanau_desc *desc,
                                                   const vkattn_bahdanau_weights *w,
                                                   const vkattn_layer_call *call,
                                                   const vkattn_layer_host_io *io);
vkattn_result vkattn_reference_bahdanau_backward(
    const vkattn_bahdanau_desc *desc, const vkattn_bahdanau_weights *w,
    const vkattn_layer_call *call, const vkattn_layer_host_io *io, const float *grad_output,
    const vkattn_layer_host_grads *grads, vkattn_bahdanau_weights *grad_w);
vkattn_result vkattn_bahdanau_weights_load(vkattn_weights_file *file,
                                                      const vkattn_bahdanau_desc *desc,
                                                      const vkattn_weights_load_desc *load,
                                                      vkattn_bahdanau_weights *out);
void vkattn_bahdanau_weights_free(vkattn_bahdanau_weights *w);
vkattn_result vkattn_bahdanau_weights_save(const char *path,
                                                      const vkattn_bahdanau_desc *desc,
                                                      const vkattn_bahdanau_weights *w,
                                                      const char *prefix);

/* ---- bahdanau.h */
vkattn_result vkattn_bahdanau_create(vkattn_context *ctx,
                                                const vkattn_bahdanau_desc *desc,
                                                vkattn_bahdanau **out);
void vkattn_bahdanau_destroy(vkattn_bahdanau *layer);
vkattn_result vkattn_bahdanau_set_weights(vkattn_bahdanau *layer,
                                                     const vkattn_bahdanau_weights *w);
vkattn_result vkattn_bahdanau_get_weights(const vkattn_bahdanau *layer,
                                                     vkattn_bahdanau_weights *w);
vkattn_result vkattn_bahdanau_record(vkattn_bahdanau *layer, VkCommandBuffer cmd,
                                                const vkattn_layer_call *call,
                                                const vkattn_layer_io *io);
vkattn_result vkattn_bahdanau_get_weight_tensors(
    vkattn_bahdanau *layer, vkattn_bahdanau_weight_tensors *out);
vkattn_result vkattn_bahdanau_backward_record(
    vkattn_bahdanau *layer, VkCommandBuffer cmd, const vkattn_layer_call *call,
    const vkattn_layer_io *io, const vkattn_layer_grads *grads,
    const vkattn_bahdanau_weight_tensors *grad_w);

/* ---- kv_cache.h */
vkattn_result vkattn_kv_cache_create(vkattn_context *ctx,
                                                const vkattn_kv_cache_desc *desc,
                                                vkattn_kv_cache **out);
void vkattn_kv_cache_destroy(vkattn_kv_cache *cache);
vkattn_kv_cache_desc vkattn_kv_cache_get_desc(const vkattn_kv_cache *cache);
vkattn_result vkattn_kv_cache_lengths(vkattn_kv_cache *cache, uint32_t *out,
                                                 bool *overflowed);
vkattn_result vkattn_kv_cache_set_lengths(vkattn_kv_cache *cache,
                                                     const uint32_t *lengths);
vkattn_result vkattn_kv_cache_append_record(vkattn_kv_cache *cache,
                                                       VkCommandBuffer cmd,
                                                       const vkattn_kv_append_io *io);
vkattn_result vkattn_kv_cache_reset_record(vkattn_kv_cache *cache, VkCommandBuffer cmd,
                                                      uint32_t seq);

/* ---- decode.h */
vkattn_result vkattn_sdpa_decode_record(vkattn_context *ctx, VkCommandBuffer cmd,
                                                   const vkattn_sdpa_decode_params *params,
                                                   const vkattn_sdpa_decode_io *io);

/* ---- dropout.h */
vkattn_result vkattn_dropout_record(vkattn_context *ctx, VkCommandBuffer cmd,
                                               const vkattn_dropout_op_params *params,
                                               const vkattn_dropout_io *io);
vkattn_result vkattn_dropout_backward_record(vkattn_context *ctx, VkCommandBuffer cmd,
                                                        const vkattn_dropout_op_params *params,
                                                        const vkattn_dropout_backward_io *io);

/* ---- mha_host.h */
vkattn_result vkattn_reference_mha(const vkattn_mha_desc *desc,
                                              const vkattn_mha_weights *w,
                                              const vkattn_layer_call *call,
                                              const vkattn_layer_host_io *io);
vkattn_result vkattn_reference_mha_backward(
    const vkattn_mha_desc *desc, const vkattn_mha_weights *w, const vkattn_layer_call *call,
    const vkattn_layer_host_io *io, const float *grad_output,
    const vkattn_layer_host_grads *grads, vkattn_mha_weights *grad_w);
vkattn_result vkattn_mha_weights_load(vkattn_weights_file *file,
                                                 const vkattn_mha_desc *desc,
                                                 const vkattn_weights_load_desc *load,
                                                 vkattn_mha_weights *out);
void vkattn_mha_weights_free(vkattn_mha_weights *w);
vkattn_result vkattn_mha_weights_save(const char *path, const vkattn_mha_desc *desc,
                                                 const vkattn_mha_weights *w, const char *prefix);

/* ---- gqa_host.h */
vkattn_result vkattn_reference_gqa(const vkattn_gqa_desc *desc,
                                              const vkattn_gqa_weights *w,
                                              const vkattn_layer_call *call,
                                              const vkattn_layer_host_io *io);
vkattn_result vkattn_reference_gqa_backward(
    const vkattn_gqa_desc *desc, const vkattn_gqa_weights *w, const vkattn_layer_call *call,
    const vkattn_layer_host_io *io, const float *grad_output,
    const vkattn_layer_host_grads *grads, vkattn_gqa_weights *grad_w);
vkattn_result vkattn_gqa_weights_load(vkattn_weights_file *file,
                                                 const vkattn_gqa_desc *desc,
                                                 const vkattn_weights_load_desc *load,
                                                 vkattn_gqa_weights *out);
vkattn_result vkattn_gqa_weights_save(const char *path, const vkattn_gqa_desc *desc,
                                                 const vkattn_gqa_weights *w, const char *prefix);

/* ---- mha.h */
vkattn_result vkattn_mha_create(vkattn_context *ctx, const vkattn_mha_desc *desc,
                                           vkattn_mha **out);
void vkattn_mha_destroy(vkattn_mha *layer);
vkattn_result vkattn_mha_set_weights(vkattn_mha *layer, const vkattn_mha_weights *w);
vkattn_result vkattn_mha_get_weights(const vkattn_mha *layer, vkattn_mha_weights *w);
vkattn_result vkattn_mha_record(vkattn_mha *layer, VkCommandBuffer cmd,
                                           const vkattn_layer_call *call,
                                           const vkattn_layer_io *io);
vkattn_result vkattn_mha_record_cached(vkattn_mha *layer, VkCommandBuffer cmd,
                                                  const vkattn_layer_call *call,
                                                  const vkattn_layer_io *io,
                                                  vkattn_kv_cache *cache);
vkattn_result vkattn_mha_get_weight_tensors(vkattn_mha *layer,
                                                       vkattn_mha_weight_tensors *out);
vkattn_result vkattn_mha_backward_record(vkattn_mha *layer, VkCommandBuffer cmd,
                                                    const vkattn_layer_call *call,
                                                    const vkattn_layer_io *io,
                                                    const vkattn_layer_grads *grads,
                                                    const vkattn_mha_weight_tensors *grad_w);

/* ---- gqa.h */
vkattn_result vkattn_gqa_create(vkattn_context *ctx, const vkattn_gqa_desc *desc,
                                           vkattn_gqa **out);
void vkattn_gqa_destroy(vkattn_gqa *layer);
vkattn_result vkattn_gqa_set_weights(vkattn_gqa *layer, const vkattn_gqa_weights *w);
vkattn_result vkattn_gqa_get_weights(const vkattn_gqa *layer, vkattn_gqa_weights *w);
vkattn_result vkattn_gqa_record(vkattn_gqa *layer, VkCommandBuffer cmd,
                                           const vkattn_layer_call *call,
                                           const vkattn_layer_io *io);
vkattn_result vkattn_gqa_record_cached(vkattn_gqa *layer, VkCommandBuffer cmd,
                                                  const vkattn_layer_call *call,
                                                  const vkattn_layer_io *io,
                                                  vkattn_kv_cache *cache);
vkattn_result vkattn_gqa_get_weight_tensors(vkattn_gqa *layer,
                                                       vkattn_gqa_weight_tensors *out);
vkattn_result vkattn_gqa_backward_record(vkattn_gqa *layer, VkCommandBuffer cmd,
                                                    const vkattn_layer_call *call,
                                                    const vkattn_layer_io *io,
                                                    const vkattn_layer_grads *grads,
                                                    const vkattn_gqa_weight_tensors *grad_w);

/* ---- half.h */
void vkattn_f32_to_f16_array(uint16_t *dst, const float *src, size_t count);
void vkattn_f16_to_f32_array(float *dst, const uint16_t *src, size_t count);

/* ---- head_op.h */
vkattn_result vkattn_head_op_record(vkattn_context *ctx, VkCommandBuffer cmd,
                                               const vkattn_head_op_params *params,
                                               const vkattn_head_op_io *io);

/* ---- heads.h */
vkattn_result vkattn_heads_split_record(vkattn_context *ctx, VkCommandBuffer cmd,
                                                   const vkattn_heads_params *params,
                                                   const vkattn_heads_io *io);
vkattn_result vkattn_heads_merge_record(vkattn_context *ctx, VkCommandBuffer cmd,
                                                   const vkattn_heads_params *params,
                                                   const vkattn_heads_io *io);
vkattn_result vkattn_heads_split_backward_record(vkattn_context *ctx,
                                                            VkCommandBuffer cmd,
                                                            const vkattn_heads_params *params,
                                                            const vkattn_heads_backward_io *io);
vkattn_result vkattn_heads_merge_backward_record(vkattn_context *ctx,
                                                            VkCommandBuffer cmd,
                                                            const vkattn_heads_params *params,
                                                            const vkattn_heads_backward_io *io);

/* ---- loss.h */
vkattn_result vkattn_mse_record(vkattn_context *ctx, VkCommandBuffer cmd,
                                           const vkattn_mse_params *params,
                                           const vkattn_mse_io *io);

/* ---- matmul.h */
vkattn_result vkattn_matmul_record(vkattn_context *ctx, VkCommandBuffer cmd,
                                              const vkattn_matmul_params *params,
                                              const vkattn_matmul_io *io);

/* ---- matmul_backward.h */
vkattn_result vkattn_matmul_backward_record(vkattn_context *ctx, VkCommandBuffer cmd,
                                                       const vkattn_matmul_params *params,
                                                       const vkattn_matmul_backward_io *io);

/* ---- optim.h */
vkattn_result vkattn_optim_step_record(vkattn_context *ctx, VkCommandBuffer cmd,
                                                  const vkattn_optim_params *params,
                                                  const vkattn_optim_io *io);

/* ---- philox.h */
void vkattn_philox4x32_10(const uint32_t counter[4], const uint32_t key[2],
                                     uint32_t out[4]);
bool vkattn_dropout_keep(uint64_t seed, uint64_t offset, uint32_t threshold,
                                    uint32_t bh, uint32_t i, uint32_t j);

/* ---- reference.h */
vkattn_result vkattn_reference_matmul(const vkattn_matmul_params *p,
                                                 const vkattn_matmul_dtypes *types, const void *a,
                                                 const void *b, const void *bias, void *c);
vkattn_result vkattn_reference_softmax(const vkattn_softmax_params *p,
                                                  const vkattn_softmax_dtypes *types,
                                                  const void *scores, const void *bias,
                                                  const float *value_mask, const float *mask,
                                                  void *out);
vkattn_result vkattn_reference_additive(const vkattn_additive_params *p,
                                                   const vkattn_additive_dtypes *types,
                                                   const void *q, const void *k,
                                                   const void *scale_vec, void *scores);
vkattn_result vkattn_reference_heads_split(const vkattn_heads_params *p,
                                                      const vkattn_io_dtypes *types,
                                                      const void *in, void *out);
vkattn_result vkattn_reference_heads_merge(const vkattn_heads_params *p,
                                                      const vkattn_io_dtypes *types,
                                                      const void *in, void *out);
vkattn_result vkattn_reference_dropout(const vkattn_dropout_op_params *p,
                                                  const vkattn_io_dtypes *types, const void *in,
                                                  void *out);
vkattn_result vkattn_reference_dropout_mask(const vkattn_dropout_op_params *p,
                                                       uint8_t *keep);
vkattn_result vkattn_reference_sdpa(const vkattn_sdpa_params *p,
                                               const vkattn_sdpa_dtypes *types, const void *q,
                                               const void *k, const void *v, const float *bias,
                                               const float *value_mask, const float *mask,
                                               void *out, float *weights);
vkattn_result vkattn_reference_sdpa_decode(const vkattn_sdpa_decode_params *p,
                                                      const vkattn_sdpa_dtypes *types,
                                                      const void *q, const void *k, const void *v,
                                                      const uint32_t *lengths,
                                                      const float *value_mask, void *out);
vkattn_result vkattn_reference_head_op(const vkattn_head_op_params *p,
                                                  const vkattn_head_op_host_io *io);

/* ---- reference_backward.h */
vkattn_result vkattn_reference_matmul_backward(const vkattn_matmul_params *p,
                                                          const float *a, const float *b,
                                                          const float *grad_c, float *grad_a,
                                                          float *grad_b, float *grad_bias);
vkattn_result vkattn_reference_additive_backward(
    const vkattn_additive_params *p, const float *q, const float *k, const float *scale_vec,
    const float *grad_scores, float *grad_q, float *grad_k, float *grad_scale);
vkattn_result vkattn_reference_optim_step(const vkattn_optim_params *p, size_t n,
                                                     float *param, const float *grad,
                                                     float *state, float *step);
vkattn_result vkattn_reference_mse(const vkattn_mse_params *p, const float *pred,
                                              const float *target, float *loss, float *grad);
vkattn_result vkattn_reference_softmax_backward(const vkattn_softmax_params *p,
                                                           const float *weights,
                                                           const float *grad_out,
                                                           const float *bias,
                                                           const float *value_mask,
                                                           const float *mask,
                                                           float *grad_scores);
vkattn_result vkattn_reference_sdpa_backward(const vkattn_sdpa_params *p,
                                                        const float *q, const float *k,
                                                        const float *v, const float *bias,
                                                        const float *value_mask,
                                                        const float *mask, const float *grad_out,
                                                        float *grad_q, float *grad_k,
                                                        float *grad_v);

/* ---- sdpa.h */
vkattn_result vkattn_sdpa_workspace_size(vkattn_context *ctx,
                                                    const vkattn_sdpa_params *params,
                                                    uint64_t *floats);
vkattn_result vkattn_sdpa_record(vkattn_context *ctx, VkCommandBuffer cmd,
                                            const vkattn_sdpa_params *params,
                                            const vkattn_sdpa_io *io);

/* ---- sdpa_backward.h */
vkattn_result vkattn_sdpa_backward_workspace_size(vkattn_context *ctx,
                                                             const vkattn_sdpa_params *params,
                                                             bool have_lse, bool have_weights,
                                                             uint64_t *floats, uint32_t *count);
vkattn_result vkattn_sdpa_backward_record(vkattn_context *ctx, VkCommandBuffer cmd,
                                                     const vkattn_sdpa_params *params,
                                                     const vkattn_sdpa_backward_io *io);

/* ---- slicer.h */
vkattn_result vkattn_slicer_create(vkattn_context *ctx, const vkattn_slicer_desc *desc,
                                              vkattn_slicer **out);
void vkattn_slicer_destroy(vkattn_slicer *slicer);
vkattn_result vkattn_slicer_record_next(vkattn_slicer *slicer, VkCommandBuffer cmd,
                                                   bool *done);
vkattn_result vkattn_slicer_reset(vkattn_slicer *slicer);
vkattn_result vkattn_slicer_set_budget(vkattn_slicer *slicer, double budget_us);
vkattn_result vkattn_slicer_get_info(vkattn_slicer *slicer, vkattn_slicer_info *info);
vkattn_result vkattn_slicer_get_piece(vkattn_slicer *slicer, uint32_t index,
                                                 vkattn_slicer_piece *piece);

/* ---- softmax.h */
vkattn_result vkattn_softmax_record(vkattn_context *ctx, VkCommandBuffer cmd,
                                               const vkattn_softmax_params *params,
                                               const vkattn_softmax_io *io);

/* ---- softmax_backward.h */
vkattn_result vkattn_softmax_backward_record(vkattn_context *ctx, VkCommandBuffer cmd,
                                                        const vkattn_softmax_params *params,
                                                        const vkattn_softmax_backward_io *io);

/* ---- timer.h */
vkattn_result vkattn_timer_create(vkattn_context *ctx, uint32_t marks,
                                             vkattn_timer **out);
void vkattn_timer_destroy(vkattn_timer *timer);
vkattn_result vkattn_timer_reset(vkattn_timer *timer, VkCommandBuffer cmd);
vkattn_result vkattn_timer_mark(vkattn_timer *timer, VkCommandBuffer cmd, uint32_t index);
vkattn_result vkattn_timer_elapsed_ms(vkattn_timer *timer, uint32_t from, uint32_t to,
                                                 double *ms);
"""

# The structs and enums the drift test compares with the headers.
STRUCTS = (
    "vkattn_import_desc", "vkattn_allocation_request", "vkattn_allocation", "vkattn_allocator",
    "vkattn_context_desc", "vkattn_coopmat_check", "vkattn_context_info", "vkattn_memory_stats",
    "vkattn_optional_extension", "vkattn_device_info", "vkattn_context_stats",
    "vkattn_matrix_layout", "vkattn_matmul_params", "vkattn_broadcast", "vkattn_mask_params",
    "vkattn_dropout_params", "vkattn_softmax_params", "vkattn_additive_params",
    "vkattn_heads_params", "vkattn_dropout_op_params", "vkattn_sdpa_params",
    "vkattn_sdpa_decode_params", "vkattn_rope_params", "vkattn_head_op_params",
    "vkattn_buffer_view", "vkattn_tensor_desc", "vkattn_tensor_info", "vkattn_additive_io",
    "vkattn_layer_call", "vkattn_layer_host_io", "vkattn_layer_host_grads",
    "vkattn_weights_tensor_info", "vkattn_weights_tensor", "vkattn_weights_load_desc",
    "vkattn_additive_attention_desc", "vkattn_additive_attention_weights", "vkattn_layer_io",
    "vkattn_layer_grads", "vkattn_additive_attention_weight_tensors",
    "vkattn_additive_backward_io", "vkattn_attention_desc", "vkattn_attention_weights",
    "vkattn_attention_weight_tensors", "vkattn_bahdanau_desc", "vkattn_bahdanau_weights",
    "vkattn_bahdanau_weight_tensors", "vkattn_kv_cache_desc", "vkattn_kv_append_io",
    "vkattn_sdpa_decode_io", "vkattn_dropout_io", "vkattn_dropout_backward_io", "vkattn_mha_desc",
    "vkattn_mha_weights", "vkattn_gqa_desc", "vkattn_mha_weight_tensors", "vkattn_head_op_io",
    "vkattn_heads_io", "vkattn_heads_backward_io", "vkattn_optim_params", "vkattn_mse_params",
    "vkattn_mse_io", "vkattn_matmul_io", "vkattn_matmul_backward_io", "vkattn_optim_io",
    "vkattn_matmul_dtypes", "vkattn_softmax_dtypes", "vkattn_additive_dtypes", "vkattn_io_dtypes",
    "vkattn_sdpa_dtypes", "vkattn_head_op_host_io", "vkattn_sdpa_io", "vkattn_sdpa_backward_io",
    "vkattn_slicer_desc", "vkattn_slicer_info", "vkattn_slicer_piece", "vkattn_softmax_io",
    "vkattn_softmax_backward_io",
)
ENUMS = (
    "vkattn_result", "vkattn_log_level", "vkattn_log_source", "vkattn_device_type",
    "vkattn_coopmat_check_state", "vkattn_causal", "vkattn_masked_row", "vkattn_sdpa_path",
    "vkattn_rope_layout", "vkattn_head_op", "vkattn_dtype", "vkattn_initializer",
    "vkattn_weights_dtype", "vkattn_weights_names", "vkattn_score_mode", "vkattn_optim_algorithm",
)
