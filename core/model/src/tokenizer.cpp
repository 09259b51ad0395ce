// tokenizer.json: placeholder until the tokenizer pipeline lands.
