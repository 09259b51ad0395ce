// safetensors: placeholder until the reader lands.
