// Store a trained relation-path ranker on its dataset's node (replacing the previous one).
MATCH (d:Dataset {name: $dataset})
SET d.path_ranker_weight = $weight, d.path_ranker_dimension = $dimension, d.path_ranker_bias = $bias,
    d.path_ranker_embedder = $embedder, d.path_ranker_report = $report, d.path_ranker_trained_at = datetime(),
    d.path_ranker_step_q = $step_q, d.path_ranker_step_rel = $step_rel, d.path_ranker_length_q = $length_q,
    d.path_ranker_hops_q = $hops_q, d.path_ranker_hops_bias = $hops_bias,
    d.path_ranker_plan_paths = $plan_paths, d.path_ranker_plan_weight = $plan_weight,
    d.path_ranker_plan_bias = $plan_bias, d.path_ranker_plan_strength = $plan_strength
RETURN d.name AS name
