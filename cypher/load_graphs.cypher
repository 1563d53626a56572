UNWIND $rows AS row
MERGE (g:Graph {uid: row.uid})
SET g += row.props
RETURN count(*) AS written
