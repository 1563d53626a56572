SHOW VECTOR INDEXES
YIELD name, labelsOrTypes, properties, options
WHERE labelsOrTypes IN [['Entity'], ['REL']] AND properties = ['embedding']
RETURN name, options.indexConfig.`vector.dimensions` AS dimension
