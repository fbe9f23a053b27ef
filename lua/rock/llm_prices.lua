--- rock.llm_prices: USD per million tokens for some well-known models, read
-- by rock.llm.cost. Plain data: edit it, or pass rock.llm.new{prices=} (or
-- rock.llm.cost's third argument) to override. A name is matched exactly,
-- then with its provider prefixes stripped ("openai/gpt-4o" -> "gpt-4o").
-- cached_input (optional) prices prompt tokens the provider served from its
-- cache; without it they cost as input. List prices as published by the
-- providers in 2025: check them before trusting a bill to the cent.
return {
  -- OpenAI
  ["gpt-4o"] = { input = 2.50, output = 10.00, cached_input = 1.25 },
  ["gpt-4o-mini"] = { input = 0.15, output = 0.60, cached_input = 0.075 },
  ["gpt-4.1"] = { input = 2.00, output = 8.00, cached_input = 0.50 },
  ["gpt-4.1-mini"] = { input = 0.40, output = 1.60, cached_input = 0.10 },
  ["gpt-4.1-nano"] = { input = 0.10, output = 0.40, cached_input = 0.025 },
  ["o3"] = { input = 2.00, output = 8.00, cached_input = 0.50 },
  ["o4-mini"] = { input = 1.10, output = 4.40, cached_input = 0.275 },
  ["gpt-5"] = { input = 1.25, output = 10.00, cached_input = 0.125 },
  ["gpt-5-mini"] = { input = 0.25, output = 2.00, cached_input = 0.025 },
  ["gpt-5-nano"] = { input = 0.05, output = 0.40, cached_input = 0.005 },
  -- Anthropic (through an OpenAI-compatible proxy); cached_input = cache reads
  ["claude-sonnet-4-20250514"] = { input = 3.00, output = 15.00, cached_input = 0.30 },
  ["claude-sonnet-4-0"] = { input = 3.00, output = 15.00, cached_input = 0.30 },
  ["claude-3-7-sonnet-20250219"] = { input = 3.00, output = 15.00, cached_input = 0.30 },
  ["claude-3-5-sonnet-20241022"] = { input = 3.00, output = 15.00, cached_input = 0.30 },
  ["claude-opus-4-20250514"] = { input = 15.00, output = 75.00, cached_input = 1.50 },
  ["claude-3-5-haiku-20241022"] = { input = 0.80, output = 4.00, cached_input = 0.08 },
  -- DeepSeek
  ["deepseek-chat"] = { input = 0.27, output = 1.10, cached_input = 0.07 },
  ["deepseek-reasoner"] = { input = 0.55, output = 2.19, cached_input = 0.14 },
}
