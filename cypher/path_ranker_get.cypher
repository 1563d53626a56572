// The relation-path ranker stored for a dataset (all null when none was trained; read-only).
MATCH (d:Dataset {name: $dataset})
RETURN d.path_ranker_weight AS weight, d.path_ranker_dimension AS dimension, d.path_ranker_bias AS bias,
       d.path_ranker_embedder AS embedder, d.path_ranker_report AS report,
       d.path_ranker_step_q AS step_q, d.path_ranker_step_rel AS step_rel, d.path_ranker_length_q AS length_q,
       d.path_ranker_hops_q AS hops_q, d.path_ranker_hops_bias AS hops_bias,
       d.path_ranker_plan_paths AS plan_paths, d.path_ranker_plan_weight AS plan_weight,
       d.path_ranker_plan_bias AS plan_bias, d.path_ranker_plan_strength AS plan_strength
