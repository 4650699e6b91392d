#version 450
// examples/frame_budget.c's scene: a ring of triangles turning with the frame,
// positions from gl_VertexIndex (no vertex buffer).
layout(push_constant) uniform Scene { float phase; } scene;
layout(location = 0) out vec3 color;

void main()
{
    int tri = gl_VertexIndex / 3, corner = gl_VertexIndex % 3;
    float centre = scene.phase + 0.785398 * float(tri); // 8 triangles
    vec2 c = 0.55 * vec2(cos(centre), sin(centre));
    float a = 3.0 * scene.phase + 2.094395 * float(corner);
    gl_Position = vec4(c + 0.3 * vec2(cos(a), sin(a)), 0.0, 1.0);
    color = vec3(corner == 0, corner == 1, corner == 2) * 0.8 + 0.2 * float(tri) / 8.0;
}
