/**
 * The three.js scene behind the STL viewer: the model centred and lit, its sharp edges drawn,
 * a camera framing its bounding sphere, orbit and zoom by mouse and touch, drawn only when
 * something changed. StlViewer.vue imports this module with `import()`, so three.js is a chunk
 * of its own that only pages showing a model download.
 */
import {
  AmbientLight,
  Color,
  DirectionalLight,
  DoubleSide,
  EdgesGeometry,
  HemisphereLight,
  LineBasicMaterial,
  LineSegments,
  Mesh,
  MeshStandardMaterial,
  PerspectiveCamera,
  Scene,
  Vector3,
  WebGLRenderer,
} from 'three';
import { OrbitControls } from 'three/examples/jsm/controls/OrbitControls.js';
import { STLLoader } from 'three/examples/jsm/loaders/STLLoader.js';

/** Colours taken from the page's theme (CSS variables), so the model suits light and dark. */
export interface SceneColors {
  model: string;
  edges: string;
}

export interface StlScene {
  /** Triangles in the model. */
  readonly triangles: number;
  /** Back to the first view. */
  reset(): void;
  resize(width: number, height: number): void;
  setColors(colors: SceneColors): void;
  dispose(): void;
}

/** A problem the person should read (the viewer shows its message as it is). */
export class StlSceneError extends Error {}

// Edges cost a second geometry; past this many triangles the shading alone has to do.
const EDGE_TRIANGLE_LIMIT = 200_000;
const FOV = 40;

/** Builds the scene on `canvas` and draws it once; throws StlSceneError when it cannot. */
export function openStlScene(canvas: HTMLCanvasElement, bytes: ArrayBuffer, colors: SceneColors): StlScene {
  const geometry = new STLLoader().parse(bytes);
  const positions = geometry.getAttribute('position');
  geometry.computeBoundingBox();
  const box = geometry.boundingBox;
  const finite =
    box !== null && [box.min.x, box.min.y, box.min.z, box.max.x, box.max.y, box.max.z].every(Number.isFinite);
  if (!positions || positions.count === 0 || !finite) {
    geometry.dispose();
    throw new StlSceneError(finite ? 'the model has no triangles' : 'the model has broken coordinates');
  }
  const center = box.getCenter(new Vector3());
  geometry.translate(-center.x, -center.y, -center.z);
  // Facet normals in STL files are often zero or wrong; computed ones light every face.
  geometry.computeVertexNormals();
  geometry.computeBoundingSphere();
  const radius = geometry.boundingSphere?.radius || 1;

  let renderer: WebGLRenderer;
  try {
    renderer = new WebGLRenderer({ canvas, antialias: true, alpha: true });
  } catch {
    geometry.dispose();
    throw new StlSceneError('this browser cannot draw 3D here (WebGL is off or not supported)');
  }
  renderer.setPixelRatio(Math.min(window.devicePixelRatio || 1, 2));
  // Transparent: the frame's CSS background (a theme colour) shows through.
  renderer.setClearColor(0x000000, 0);

  const scene = new Scene();
  const material = new MeshStandardMaterial({
    color: new Color(colors.model),
    roughness: 0.6,
    metalness: 0.05,
    side: DoubleSide,
  });
  scene.add(new Mesh(geometry, material));
  const triangles = positions.count / 3;
  const edgeGeometry = triangles <= EDGE_TRIANGLE_LIMIT ? new EdgesGeometry(geometry, 30) : null;
  const edgeMaterial = new LineBasicMaterial({
    color: new Color(colors.edges),
    transparent: true,
    opacity: 0.35,
  });
  if (edgeGeometry) scene.add(new LineSegments(edgeGeometry, edgeMaterial));

  // STL from CAD and 3D printing (OpenSCAD included) is Z-up.
  const camera = new PerspectiveCamera(FOV, 1, radius / 100, radius * 100);
  camera.up.set(0, 0, 1);
  const distance = (radius / Math.sin(((FOV / 2) * Math.PI) / 180)) * 1.1;
  camera.position.copy(new Vector3(1, -1.4, 0.9).normalize().multiplyScalar(distance));
  camera.lookAt(0, 0, 0);
  // A light that moves with the camera keeps the side the person looks at lit.
  const headlight = new DirectionalLight(0xffffff, 2.4);
  headlight.position.set(radius * 0.5, radius * 2, radius);
  camera.add(headlight);
  scene.add(camera);
  // Sky above, ground below, along the model's up (Z): top faces light, bottom faces dimmer.
  const sky = new HemisphereLight(0xffffff, 0x30343c, 1.2);
  sky.position.set(0, 0, 1);
  scene.add(sky);
  scene.add(new AmbientLight(0xffffff, 0.15));

  const controls = new OrbitControls(camera, canvas);
  // With the canvas focused: arrow keys move the model, Shift+arrows turn it.
  controls.listenToKeyEvents(canvas);
  controls.target.set(0, 0, 0);
  controls.minDistance = radius * 0.2;
  controls.maxDistance = distance * 10;
  controls.update();
  controls.saveState();

  const render = () => renderer.render(scene, camera);
  controls.addEventListener('change', render);

  const view: StlScene = {
    triangles,
    reset() {
      controls.reset();
      render();
    },
    resize(width, height) {
      if (width <= 0 || height <= 0) return;
      renderer.setSize(width, height, false);
      camera.aspect = width / height;
      camera.updateProjectionMatrix();
      render();
    },
    setColors(next) {
      material.color.set(next.model);
      edgeMaterial.color.set(next.edges);
      render();
    },
    dispose() {
      controls.removeEventListener('change', render);
      controls.dispose();
      geometry.dispose();
      edgeGeometry?.dispose();
      material.dispose();
      edgeMaterial.dispose();
      renderer.dispose();
      // Browsers keep a handful of WebGL contexts per page; give this one back now.
      renderer.forceContextLoss();
    },
  };
  view.resize(canvas.clientWidth || 480, canvas.clientHeight || 360);
  return view;
}
