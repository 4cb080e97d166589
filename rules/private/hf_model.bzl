"""hf_model: a Hugging Face transformers model by task, from a config or a checkpoint folder."""

load("//exporter:exporter_facts.bzl", "HF_MODEL_ENTRY", "HF_TASKS")
load("//rules:providers.bzl", "TorchModelInfo", "shape_spec_info", "torch_model_info")
load("//rules/private/lib:attr_checks.bzl", "message_prefix")
load("//rules/private/lib:shape_spec_check.bzl", "check_spec")
load(":shape_spec.bzl", "dim", "encode_dims", "encode_inputs", "tensor")
load(":tokenizer.bzl", "tokenizer")

# Models that number positions from pad_token_id + 1, so two positions are never a token's.
_OFFSET_POSITIONS = ["camembert", "data2vec-text", "longformer", "roberta", "roberta-prelayernorm", "xlm-roberta", "xlm-roberta-xl", "xmod"]

# The longest text a spec allows when the config names no limit (T5's relative positions).
_DEFAULT_TEXT_LIMIT = 512

# The samples a CTC speech model's spec takes: one second at 16 kHz.
_CTC_SAMPLES = 16000

# The default cache of a generative model, when the config allows that many positions.
_DEFAULT_CACHE_LEN = 128

def _first(config, keys, default = None):
    for key in keys:
        if config.get(key) != None:
            return config[key]
    return default

def _text_limit(config):
    # The most tokens a text model takes: its position table's size.
    limit = _first(config, ["max_position_embeddings", "n_positions", "max_seq_len"], _DEFAULT_TEXT_LIMIT)
    return limit - 2 if config.get("model_type") in _OFFSET_POSITIONS else limit

def _cache_limit(config):
    # The most positions a generative model's decoder numbers.
    return _first(config, ["max_target_positions", "max_position_embeddings", "n_positions"], _DEFAULT_TEXT_LIMIT)

def _text_spec(config):
    tokens = {"dtype": "int64"}
    return (
        {
            "input_ids": tensor([1, "seq"], **tokens),
            "attention_mask": tensor([1, "seq"], fill = 1, **tokens),
        },
        {"seq": dim(min = 1, max = _text_limit(config))},
    )

def _image_spec(where, config):
    size = _first(config, ["image_size"], 224)
    height, width = (size, size) if type(size) == "int" else (size[0], size[1])
    channels = _first(config, ["num_channels"], 3)
    if type(height) != "int" or type(width) != "int" or type(channels) != "int":
        fail(where + "config's image_size ({}) and num_channels ({}) must be ints; fix `config` or set `inputs`".format(size, channels))
    return ({"pixel_values": tensor([1, channels, height, width])}, {})

def _audio_spec(config):
    if "num_mel_bins" in config:  # an encoder-decoder (Whisper): log-mel frames, twice its positions
        frames = 2 * _first(config, ["max_source_positions"], 1500)
        return ({"input_features": tensor([1, config["num_mel_bins"], frames])}, {})

    # A CTC model's raw samples, static: the feature encoder's strided convolutions make
    # torch.export specialise a dynamic length (docs/huggingface.md); `inputs` sets another.
    return ({"input_values": tensor([1, _CTC_SAMPLES])}, {})

def _decoder_spec(where, config, encoder_spec):
    """A seq2seq decoder step: one token, the encoder's states, its position in the cache."""
    width = _first(config, ["d_model", "hidden_size"])
    if type(width) != "int":
        fail(where + "config has no d_model or hidden_size (the encoder's width); fix `config`")
    length = "seq" if "seq" in encoder_spec[1] else config.get("max_source_positions", 1500)
    ints = {"dtype": "int64"}
    return (
        {
            "decoder_input_ids": tensor([1, 1], **ints),
            "encoder_hidden_states": tensor([1, length, width]),
            "cache_position": tensor([1], fill = 0, **ints),
        },
        encoder_spec[1],
    )

def _is_generative(task, config):
    kind = HF_TASKS.get(task)
    return kind in ("decoder", "seq2seq") or (kind == "audio" and type(config) == "dict" and "num_mel_bins" in config)

def _derived_spec(where, task, config, component):
    """(inputs, dims) of the shape spec of task's model or component, or None.

    A generative task's whole model is only the eager reference, and a text-generation model's
    spec is llm_program's.
    """
    kind = HF_TASKS[task]
    if _is_generative(task, config) and not component:
        return None
    spec = _audio_spec(config) if kind == "audio" else (_image_spec(where, config) if kind == "image" else _text_spec(config))
    return _decoder_spec(where, config, spec) if component == "decoder" else spec

def _spec(ctx, where, config):
    derived = _derived_spec(where, ctx.attr.task, config, ctx.attr.component)
    if derived == None:
        return None
    dims = json.decode(ctx.attr.dims_json)
    if ctx.attr.inputs_json:
        inputs = json.decode(ctx.attr.inputs_json)
    else:
        inputs = encode_inputs(where, derived[0])
        dims = dict(encode_dims(derived[1], where), **dims)
    spec = check_spec({"dims": dims, "hint": None, "inputs": inputs}, where)
    return shape_spec_info(label = ctx.label, spec = spec)

def _check(where, ctx, config):
    if ctx.attr.task not in HF_TASKS:
        fail(where + "task {} is not one of {}; fix `task`".format(repr(ctx.attr.task), ", ".join(HF_TASKS.keys())))
    if type(config) != "dict" or type(config.get("model_type")) != "string":
        fail(where + "config must be the transformers config as a dict with its model_type " +
             "(for a checkpoint folder, its config.json: hf_configs in WORKSPACE reads it; docs/huggingface.md)")
    if ctx.files.checkpoint_dir and not [f for f in ctx.files.checkpoint_dir if f.basename == "config.json"]:
        fail(where + "checkpoint_dir has no config.json; list the files of a folder saved with save_pretrained")
    folders = {f.dirname: None for f in ctx.files.checkpoint_dir}
    if len(folders) > 1:
        fail(where + "checkpoint_dir has files in {} folders; list the files of one folder, e.g. glob([\"bert/*\"])".format(len(folders)))

def _hf_model_impl(ctx):
    where = message_prefix("hf_model", ctx.label)
    config = json.decode(ctx.attr.config_json)
    _check(where, ctx, config)
    init_args = {"task": ctx.attr.task, "config": config}
    if ctx.attr.component:
        init_args["component"] = ctx.attr.component
    if ctx.attr.max_cache_len:
        init_args["max_cache_len"] = ctx.attr.max_cache_len
    spec = _spec(ctx, where, config)
    model = torch_model_info(
        label = ctx.label,
        entry = HF_MODEL_ENTRY,
        init_args = init_args,
        checkpoint = None,
        checkpoint_files = ctx.files.checkpoint_dir,
        srcs = depset(),
        import_roots = depset(),
        lora = None,
    )
    files = ctx.files.checkpoint_dir
    return [model, PyInfo(transitive_sources = depset()), DefaultInfo(runfiles = ctx.runfiles(files = files))] + ([spec] if spec else [])

hf_model_rule = rule(
    implementation = _hf_model_impl,
    doc = "A transformers model for a task (set up by hf_model): a TorchModelInfo and, when the task takes one, its ShapeSpecInfo.",
    attrs = {
        "task": attr.string(mandatory = True, doc = "The task (HF_TASKS)."),
        "config_json": attr.string(mandatory = True, doc = "The transformers config as JSON (set by the macro)."),
        "checkpoint_dir": attr.label_list(allow_files = True, doc = "The files of a save_pretrained folder."),
        "component": attr.string(values = ["", "encoder", "decoder"], doc = "An encoder-decoder's part: encoder or decoder."),
        "max_cache_len": attr.int(doc = "A generative module's static KV cache length."),
        "inputs_json": attr.string(doc = "The spec's inputs instead of the derived ones, as tagged JSON (set by the macro)."),
        "dims_json": attr.string(default = "{}", doc = "Dims added to or replacing the derived ones, as JSON (set by the macro)."),
    },
    provides = [TorchModelInfo],
)

def _folder_file(checkpoint_dir, basename):
    found = [f for f in (checkpoint_dir or []) if f.split("/")[-1] == basename]
    return found[0] if found else None

def _generative_targets(name, task, checkpoint_dir, cache_len, attrs, common):
    if HF_TASKS[task] == "decoder":
        tokenizer_file = _folder_file(checkpoint_dir, "tokenizer.json")
        if tokenizer_file:
            tokenizer(
                name = name + "_tokenizer",
                src = tokenizer_file,
                tokenizer_config = _folder_file(checkpoint_dir, "tokenizer_config.json"),
                **common
            )
        return
    for component in ("encoder", "decoder"):
        hf_model_rule(
            name = "{}_{}".format(name, component),
            component = component,
            max_cache_len = cache_len if component == "decoder" else 0,
            **attrs
        )

def hf_model(name, task, config, checkpoint_dir = None, inputs = None, dims = {}, max_cache_len = None, **kwargs):
    """A transformers model for a task, with no Python of your own.

    <name> is transformers' Auto class for the task (AutoModelForMaskedLM, ...), from the config
    with seeded weights, or from checkpoint_dir's weights. It is a torch_model and, for the tasks
    with one input spec, also the shape spec derived from the config, so a torch_export takes it
    as both: text is input_ids and attention_mask with a dim "seq" from 1 to the model's longest
    input; images are pixel_values at the config's image_size and num_channels; audio is a CTC
    model's raw samples (one second at 16 kHz). The generative tasks add the modules ExecuTorch's
    runners call: for text-generation <name> is the causal LM behind the LLM runner's forward
    with a static KV cache (hand it to llm_program, with strict = True), and a folder's
    tokenizer.json becomes <name>_tokenizer (with the folder's tokenizer_config.json, which names
    its bos and eos tokens); the program's get_bos_id and get_eos_ids are the model's generation
    config's (generation_config.json, else config.json), as transformers' generate() stops at
    them; for text2text-generation and Whisper-style speech
    recognition <name>_encoder and <name>_decoder (one token over a static cache) are the two
    methods of one program, each with its spec, and <name> is the whole model, the eager
    reference. Outputs keep transformers' names (logits, last_hidden_state); docs/huggingface.md.

        hf_model(name = "bert", task = "fill-mask", config = {"model_type": "bert", ...})
        torch_export(name = "bert_ep", model = ":bert")   # shapes: the model's own spec

    Args:
      name: the model's name.
      task: one of fill-mask, text-classification, token-classification, feature-extraction,
        image-classification, object-detection, automatic-speech-recognition,
        text2text-generation, text-generation.
      config: the transformers config as a dict with its model_type; with checkpoint_dir, the
        folder's own config.json (hf_configs in WORKSPACE reads it), which the export checks.
      checkpoint_dir: the files of a folder saved with save_pretrained (config.json,
        *.safetensors, tokenizer files), e.g. glob(["bert/*"]); without it the weights are seeded.
      inputs: the spec's inputs, as shape_spec's, instead of the derived ones (with `dims` then
        the spec's only dims).
      dims: dims to add to or replace in the derived spec, e.g. {"seq": dim(min = 1, max = 128)}.
      max_cache_len: a generative model's static KV cache length; default the config's
        positions, at most 128.
      **kwargs: common attributes (visibility, tags, ...).
    """
    where = "hf_model //{}:{}: ".format(native.package_name(), name)
    common = {"tags": kwargs.get("tags"), "visibility": kwargs.get("visibility")}
    attrs = dict(
        task = task,
        config_json = json.encode(config),
        checkpoint_dir = checkpoint_dir,
        inputs_json = json.encode(encode_inputs(where, inputs)) if inputs else "",
        dims_json = json.encode(encode_dims(dims, where)),
        **kwargs
    )
    generative = _is_generative(task, config)
    cache_len = max_cache_len or (min(_cache_limit(config), _DEFAULT_CACHE_LEN) if generative and type(config) == "dict" else 0)
    hf_model_rule(name = name, max_cache_len = cache_len if HF_TASKS.get(task) == "decoder" else 0, **attrs)
    if generative:
        _generative_targets(name, task, checkpoint_dir, cache_len, attrs, common)
