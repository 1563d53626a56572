CREATE VECTOR INDEX $index IF NOT EXISTS
FOR (n:Entity) ON n.embedding
OPTIONS {indexConfig: {`vector.dimensions`: $dimension, `vector.similarity_function`: 'cosine'}}
